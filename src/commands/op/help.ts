/**
 * `plat op <operationId> --help`, written from the document: what the operation does, its parameters with types,
 * defaults and whether they are required, its request body's fields, the scopes a token needs, and an example line
 * that would pass plat's own checks. Every string from the document is sanitized (it is printed to a terminal).
 */
import type { OperationDetail } from '../../catalogue/openapi.js';
import type { ParamSpec } from '../../catalogue/operation-shape.js';
import { expectation, typeOf } from '../../catalogue/param-check.js';
import { commandLine, sanitize } from '../../terminal/text.js';
import { largest } from '../shared/table.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function renderOpHelp(op: OperationDetail & { operationId: string }): string {
  const lines: string[] = [];
  lines.push(`Usage: plat op ${sanitize(op.operationId, 100)}${op.parameters.map((p) => (p.required ? ` --${p.name} <${valueName(p)}>` : '')).join('')}${op.parameters.some((p) => !p.required) ? ' [parameters]' : ''}${op.body ? ' [-f/-F fields | --input file]' : ''}`);
  lines.push('');
  lines.push(`${op.method} ${sanitize(op.path)}${op.summary ? ` — ${sanitize(op.summary)}` : ''}`);
  if (op.description && op.description !== op.summary) lines.push('', ...sanitize(op.description, 2000, { multiline: true }).split('\n').map((l) => l.trimEnd()));

  if (op.parameters.length > 0) {
    lines.push('', 'Parameters:');
    const rows = op.parameters.map((p) => {
      const facts = [p.in, p.required ? 'required' : undefined, defaultOf(p.schema)].filter(Boolean).join(', ');
      return [`--${p.name} <${valueName(p)}>`, `${facts}${p.description ? `. ${sanitize(p.description, 200)}` : ''}`];
    });
    for (const line of columns(rows)) lines.push(line);
  }
  // A description may name headers plat never takes from input (http/header-rule.ts): not offered, and said so.
  for (const refused of op.refusedHeaders ?? []) {
    lines.push('', `Not offered: the header parameter ${sanitize(refused.name, 100)}, because ${refused.reason}.`);
  }

  if (op.body) {
    lines.push('', `Request body (${sanitize(op.body.contentType, 80)}${op.body.required ? ', required' : ''}):`);
    const fields = fieldsOf(op.body.schema);
    if (fields.length > 0) lines.push(...columns(fields));
    lines.push('  Give fields with -f key=value (strings) and -F key=value (numbers, true/false, null, @file), or the whole body with --input <file|->.');
  }

  lines.push('', `Scopes: ${scopesText(op.security)}`);
  lines.push('', 'Example:', `  $ ${example(op)}`);
  lines.push('', `Then plat op behaves as plat call: the same output, flags (-H, -i, --anonymous, --timeout, --paginate, --jq, …) and exit codes.`);
  return `${lines.join('\n')}\n`;
}

/** The scopes line: alternatives joined with "or", and whether it may be called without a token. */
function scopesText(security: string[][] | null): string {
  if (security === null) return 'the document does not say.';
  const scoped = security.filter((alt) => alt.length > 0);
  const anonymous = security.some((alt) => alt.length === 0);
  if (security.length === 0) return 'needs a credential other than an OAuth token.';
  if (scoped.length === 0) return 'none (a token is not needed).';
  const text = scoped.map((alt) => alt.map((s) => sanitize(s, 100)).join(' + ')).join(', or ');
  return `${text}${anonymous ? ' (also callable without a token, as anonymous)' : ''}.`;
}

function valueName(p: ParamSpec): string {
  const schema = p.schema;
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.length <= 6) return schema.enum.map((v) => sanitize(String(v), 40)).join('|');
  return sanitize(typeOf(schema) ?? 'value', 40) || 'value';
}

function defaultOf(schema: Json): string | undefined {
  return schema.default === undefined ? undefined : `default ${sanitize(JSON.stringify(schema.default), 60)}`;
}

/** The body's top-level fields: name, type or what it expects, required. */
function fieldsOf(schema: Json | null): string[][] {
  if (!schema || !isObject(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(schema.properties)
    .slice(0, 50)
    .map(([name, raw]) => {
      const field = isObject(raw) ? raw : {};
      const facts = [expectation(field), required.includes(name) ? 'required' : undefined, defaultOf(field)].filter(Boolean).join(', ');
      const description = typeof field.description === 'string' ? `. ${sanitize(field.description, 200)}` : '';
      return [sanitize(name, 60), `${facts}${description}`];
    });
}

function columns(rows: string[][]): string[] {
  const width = Math.min(36, largest(rows.map((r) => r[0]!.length)));
  return rows.map(([left, right]) => `  ${left!.padEnd(width)}  ${right}`.trimEnd());
}

/** An example value that passes plat's own check of the schema. */
function exampleValue(schema: Json, name: string): string {
  if (schema.example !== undefined && typeof schema.example !== 'object') return String(schema.example);
  if (Array.isArray(schema.examples) && schema.examples.length > 0 && typeof schema.examples[0] !== 'object') return String(schema.examples[0]);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return String(schema.enum[0]);
  if (schema.default !== undefined && typeof schema.default !== 'object') return String(schema.default);
  switch (typeOf(schema)) {
    case 'integer':
    case 'number':
      return String(typeof schema.minimum === 'number' ? Math.max(schema.minimum, Math.min(1, typeof schema.maximum === 'number' ? schema.maximum : 1)) : 1);
    case 'boolean':
      return 'true';
    default:
      return `<${name}>`;
  }
}

function example(op: OperationDetail & { operationId: string }): string {
  const words = ['plat', 'op', op.operationId];
  for (const p of op.parameters.filter((p) => p.required)) words.push(`--${p.name}`, exampleValue(p.schema, p.name));
  const schema = op.body?.schema;
  if (schema && isObject(schema.properties)) {
    const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
    // A body that must be there but has no required field: show one field, so the example passes the check.
    const shown = required.length > 0 ? required.slice(0, 5) : op.body?.required ? Object.keys(schema.properties).slice(0, 1) : [];
    for (const name of shown) {
      const field = isObject(schema.properties[name]) ? (schema.properties[name] as Json) : {};
      const type = typeOf(field);
      const typed = type === 'integer' || type === 'number' || type === 'boolean';
      words.push(typed ? '-F' : '-f', `${name}=${exampleValue(field, name)}`);
    }
  } else if (op.body?.required) words.push('--input', 'body.json');
  return commandLine(words);
}
