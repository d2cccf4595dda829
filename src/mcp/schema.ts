/**
 * The JSON Schemas `plat mcp` hands an agent host come from the platform's API description: hostile input. What
 * goes out is a copy that keeps only the JSON Schema keywords an agent needs to fill in arguments, with every
 * string sanitised and bounded, at most MAX_DEPTH levels deep and MAX_NODES nodes in all; below the bound a schema
 * accepts anything (the server still judges). Keys an agent never needs (x- extensions, examples, $id, …) are
 * dropped.
 */
import { sanitize } from '../terminal/text.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const MAX_DEPTH = 8;
const MAX_NODES = 400;
/** Properties kept per object schema, enum values per enum, alternatives per anyOf/oneOf/allOf. */
const MAX_MEMBERS = 50;
/** A property name the host and the agent see: printable, bounded. */
const PROPERTY_NAME = /^[A-Za-z0-9_.\-[\]$@]{1,64}$/;

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'multipleOf'] as const;

export interface SchemaBudget {
  nodes: number;
}

export function newBudget(nodes = MAX_NODES): SchemaBudget {
  return { nodes };
}

/** A bounded, sanitised copy of `schema` (see the header); `{}` for anything that is not a schema object. */
export function boundSchema(schema: unknown, budget: SchemaBudget = newBudget(), depth = 0): Json {
  if (!isObject(schema) || depth >= MAX_DEPTH || --budget.nodes < 0) return {};
  const out: Json = {};
  const type = schema.type;
  if (typeof type === 'string' && TYPES.has(type)) out.type = type;
  else if (Array.isArray(type)) {
    const types = type.filter((t): t is string => typeof t === 'string' && TYPES.has(t));
    if (types.length > 0) out.type = [...new Set(types)];
  }
  // OpenAPI 3.0's nullable: true, said the JSON Schema way.
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  if (typeof schema.description === 'string') {
    const text = sanitize(schema.description, 300);
    if (text) out.description = text;
  }
  if (typeof schema.title === 'string') {
    const text = sanitize(schema.title, 100);
    if (text) out.title = text;
  }
  if (typeof schema.format === 'string' && /^[A-Za-z0-9_-]{1,40}$/.test(schema.format)) out.format = schema.format;
  if (typeof schema.pattern === 'string' && schema.pattern.length <= 200) out.pattern = sanitize(schema.pattern, 0);
  for (const keyword of NUMBER_KEYWORDS) {
    const value = schema[keyword];
    if (typeof value === 'number' && Number.isFinite(value)) out[keyword] = value;
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(isScalar).slice(0, MAX_MEMBERS).map(boundScalar);
    if (values.length > 0) out.enum = values;
  }
  if (isScalar(schema.default)) out.default = boundScalar(schema.default);
  if (isScalar(schema.const)) out.const = boundScalar(schema.const);
  if (isObject(schema.properties)) {
    const properties: Json = {};
    for (const [name, value] of Object.entries(schema.properties).slice(0, MAX_MEMBERS)) {
      if (!PROPERTY_NAME.test(name)) continue;
      properties[name] = boundSchema(value, budget, depth + 1);
    }
    out.properties = properties;
    if (Array.isArray(schema.required)) {
      const required = schema.required.filter((name): name is string => typeof name === 'string' && Object.hasOwn(properties, name));
      if (required.length > 0) out.required = [...new Set(required)];
    }
  }
  if (typeof schema.additionalProperties === 'boolean') out.additionalProperties = schema.additionalProperties;
  else if (isObject(schema.additionalProperties)) out.additionalProperties = boundSchema(schema.additionalProperties, budget, depth + 1);
  if (isObject(schema.items)) out.items = boundSchema(schema.items, budget, depth + 1);
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[keyword];
    if (Array.isArray(list) && list.length > 0) out[keyword] = list.slice(0, MAX_MEMBERS).map((s) => boundSchema(s, budget, depth + 1));
  }
  return out;
}

type Scalar = string | number | boolean | null;

function isScalar(value: unknown): value is Scalar {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function boundScalar(value: Scalar): Scalar {
  return typeof value === 'string' ? sanitize(value, 200) : value;
}
