/**
 * A parameter value as typed on the command line, checked against the parameter's schema (type, enum, bounds,
 * pattern, length) and turned into what goes on the wire. Each refusal is a sentence that names the parameter and
 * what it expects, so `plat op` can stop before anything is sent (exit 2).
 */
import type { ParamSpec } from './operation-shape.js';
import type { PatternEngine } from './pattern.js';
import { sanitize } from '../terminal/text.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a schema expects, in a few words: `an integer from 1 to 100`, `one of: active, completed`. The enum's values
 * and the pattern are the document's text, printed to a terminal: sanitized and bounded.
 */
export function expectation(schema: Json): string {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const shown = schema.enum.slice(0, 20).map((v) => sanitize(String(v), 40));
    return `one of: ${shown.join(', ')}${schema.enum.length > 20 ? `, … (${schema.enum.length} in all)` : ''}`;
  }
  const type = typeOf(schema);
  const noun =
    type === 'integer' ? 'an integer' : type === 'number' ? 'a number' : type === 'boolean' ? 'true or false' : type === 'array' ? 'a list' : 'a string';
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
  if (min !== undefined) return `${noun} of at least ${min}`;
  if (max !== undefined) return `${noun} of at most ${max}`;
  if (typeof schema.pattern === 'string') return `${noun} matching ${sanitize(schema.pattern, 100)}`;
  return noun;
}

/** The schema's type, the first non-null one when it lists several (OpenAPI 3.1 `["string", "null"]`). */
export function typeOf(schema: Json): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.find((t): t is string => typeof t === 'string' && t !== 'null');
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return typeof schema.enum[0] === 'number' ? 'number' : undefined;
  return undefined;
}

export class ParamValueError extends Error {}

/**
 * The values for one parameter (a flag may repeat for a list) as the strings to send, or a ParamValueError saying
 * what was expected. `flag` is how the person named it (`--limit`).
 */
export function checkParam(param: ParamSpec, raw: string[], flag: string, patterns?: PatternEngine): string[] {
  const schema = param.schema;
  if (typeOf(schema) === 'array') {
    const items = isObject(schema.items) ? schema.items : {};
    const values = raw.flatMap((v) => checkScalar(items, v, flag, patterns));
    if (typeof schema.minItems === 'number' && values.length < schema.minItems) throw new ParamValueError(`${flag} expects at least ${schema.minItems} values.`);
    if (typeof schema.maxItems === 'number' && values.length > schema.maxItems) throw new ParamValueError(`${flag} expects at most ${schema.maxItems} values.`);
    return values;
  }
  if (raw.length > 1) throw new ParamValueError(`${flag} takes one value (given ${raw.length} times).`);
  return checkScalar(schema, raw[0]!, flag, patterns);
}

/** Whether the schema (or, for a list, its items) has a pattern: only then is the pattern engine loaded. */
export function hasPattern(param: ParamSpec): boolean {
  const items = param.schema.items;
  return typeof param.schema.pattern === 'string' || (isObject(items) && typeof items.pattern === 'string');
}

function checkScalar(schema: Json, value: string, flag: string, patterns: PatternEngine | undefined): string[] {
  const refuse = () => new ParamValueError(`${flag} expects ${expectation(schema)} (got "${value}").`);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    if (!schema.enum.some((allowed) => String(allowed) === value)) throw refuse();
    return [value];
  }
  switch (typeOf(schema)) {
    case 'integer':
    case 'number': {
      const pattern = typeOf(schema) === 'integer' ? /^-?(0|[1-9]\d*)$/ : /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
      const n = Number(value);
      if (!pattern.test(value) || !Number.isFinite(n)) throw refuse();
      if (typeof schema.minimum === 'number' && n < schema.minimum) throw refuse();
      if (typeof schema.maximum === 'number' && n > schema.maximum) throw refuse();
      if (typeof schema.exclusiveMinimum === 'number' && n <= schema.exclusiveMinimum) throw refuse();
      if (typeof schema.exclusiveMaximum === 'number' && n >= schema.exclusiveMaximum) throw refuse();
      return [value];
    }
    case 'boolean':
      if (value !== 'true' && value !== 'false') throw refuse();
      return [value];
    default: {
      if (typeof schema.minLength === 'number' && [...value].length < schema.minLength) {
        throw new ParamValueError(`${flag} expects at least ${schema.minLength} characters.`);
      }
      if (typeof schema.maxLength === 'number' && [...value].length > schema.maxLength) {
        throw new ParamValueError(`${flag} expects at most ${schema.maxLength} characters.`);
      }
      if (typeof schema.pattern === 'string' && patterns) {
        // RE2, never V8's backtracking engine (pattern.ts); a pattern RE2 cannot run is the server's to judge.
        const test = patterns(schema.pattern);
        if (test && !test(value)) throw refuse();
      }
      return [value];
    }
  }
}
