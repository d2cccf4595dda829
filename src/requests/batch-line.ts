/**
 * One line of `plat batch` input, read and checked: `{id?, method, path, query?, headers?, body?}` is a raw request
 * (as plat call would send it), `{id?, op, params?, body?}` an operation of the platform's /openapi.json with its
 * parameters and body checked as plat op checks them. Every problem is a LineError naming what is wrong, so the
 * command can list them with their line numbers before anything is sent.
 */
import { findOperation, operationsFor, pathBelow, type ApiIndex, type FullApiIndex, type OperationDetail } from '../catalogue/openapi.js';
import { UsageError } from '../errors.js';
import { appendQuery, type FieldTree } from './fields.js';
import type { ApiRequest } from '../session/index.js';
import { prepareRequest, type PreparedRequest } from './prepare.js';

export class LineError extends Error {}

export interface PreparedLine {
  id: string | number | undefined;
  request: ApiRequest;
  /** The line without its id, as JSON: what the journal's hash is of (an id added or spaces changed leave it alone). */
  canonical: string;
  /** A raw request line (its path is checked against the description), not an op line. */
  raw: boolean;
}

const RAW_KEYS = new Set(['id', 'method', 'path', 'query', 'headers', 'body']);
const OP_KEYS = new Set(['id', 'op', 'params', 'body']);

export interface LineContext {
  baseUrl: string | undefined;
  /** The API description, read on the first op line only. */
  index(): Promise<FullApiIndex>;
  /** Operations found by id, once per run. */
  operations?: Map<string, (OperationDetail & { operationId: string }) | undefined>;
}

/** undefined for a blank line (skipped, as NDJSON readers do). */
export async function prepareLine(text: string, context: LineContext): Promise<PreparedLine | undefined> {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LineError('not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new LineError('not a JSON object');
  const line = value as Record<string, unknown>;
  const id = line.id;
  if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') throw new LineError('"id" must be a string or a number');
  const isOp = 'op' in line;
  const allowed = isOp ? OP_KEYS : RAW_KEYS;
  const extra = Object.keys(line).filter((key) => !allowed.has(key));
  if (extra.length > 0) {
    throw new LineError(`unknown member${extra.length > 1 ? 's' : ''} ${extra.map((k) => JSON.stringify(k)).join(', ')} (${isOp ? 'an op line takes id, op, params, body' : 'a request line takes id, method, path, query, headers, body'})`);
  }
  let prepared: PreparedRequest;
  try {
    prepared = isOp ? await prepareOp(line, context) : await prepareRaw(line, context);
  } catch (error) {
    if (error instanceof UsageError) throw new LineError(error.message.replace(/\.$/, ''));
    throw error;
  }
  const body = prepared.jsonBody;
  const { id: _, ...rest } = line;
  return {
    id: id as string | number | undefined,
    request: { method: prepared.method, url: prepared.url, headers: prepared.headers, body: body === undefined ? undefined : () => body },
    canonical: JSON.stringify(rest),
    raw: !isOp,
  };
}

async function prepareRaw(line: Record<string, unknown>, context: LineContext): Promise<PreparedRequest> {
  const { method, path } = line;
  if (typeof method !== 'string' || method === '') throw new LineError('"method" must be a string such as "GET" (or give "op" for an operation)');
  if (typeof path !== 'string' || path === '') throw new LineError('"path" must be a string such as "/api/courses"');
  const target = withQuery(path, line.query);
  const headers = headerLines(line.headers);
  // The header rule (http/header-rule.ts) is prepareRequest's: one normalisation for the check and the sender.
  const prepared = await prepareRequest({ method, target, headers, fields: [], typedFields: [], headerSource: 'header' }, context.baseUrl, noStdin);
  if (line.body !== undefined) {
    const type = prepared.headers['content-type'];
    // A string body with a content type of its own is sent as that text; anything else is JSON.
    if (typeof line.body === 'string' && type !== undefined && !/\bjson\b/i.test(type)) prepared.jsonBody = line.body;
    else {
      prepared.jsonBody = JSON.stringify(line.body);
      prepared.headers['content-type'] ??= 'application/json';
    }
  }
  return prepared;
}

async function prepareOp(line: Record<string, unknown>, context: LineContext): Promise<PreparedRequest> {
  if (typeof line.op !== 'string' || line.op === '') throw new LineError('"op" must be an operationId (plat op lists them)');
  const params = line.params ?? {};
  if (params === null || typeof params !== 'object' || Array.isArray(params)) throw new LineError('"params" must be an object of parameter names and values');
  const index = await context.index();
  context.operations ??= new Map();
  let op = context.operations.get(line.op);
  if (!context.operations.has(line.op)) {
    op = findOperation(index, line.op);
    context.operations.set(line.op, op);
  }
  if (!op) throw new LineError(`the platform's API has no operation "${line.op}" (plat op lists them)`);
  const given = Object.entries(params as Record<string, unknown>).map(([name, value]) => {
    const param = op.parameters.find((p) => p.name === name);
    const refused = op.refusedHeaders?.find((r) => r.name.toLowerCase() === name.trim().toLowerCase());
    if (!param && refused) throw new LineError(`${op.operationId}'s header parameter ${refused.name} is not taken from input: ${refused.reason}`);
    if (!param) {
      const names = op.parameters.map((p) => p.name).join(', ');
      throw new LineError(`${op.operationId} has no parameter "${name}"${names ? ` (it takes ${names})` : ''}`);
    }
    const values = (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    return { param, flag: `params.${name}`, values };
  });
  const { prepareOpRequest } = await import('./operation.js');
  const body = line.body;
  // The body goes through plat op's own check (read as --input would be), so it is checked against the schema too.
  return prepareOpRequest(
    op,
    given,
    { headers: [], fields: [], typedFields: [], input: body === undefined ? undefined : '-' },
    context.baseUrl,
    async () => (typeof body === 'string' ? body : JSON.stringify(body)),
  ).then((prepared) => {
    if (prepared.inputFrom === '-') {
      // A non-JSON content type: the body's text as given.
      prepared.inputFrom = undefined;
      prepared.jsonBody = typeof body === 'string' ? body : JSON.stringify(body);
    }
    return prepared;
  });
}

function withQuery(path: string, query: unknown): string {
  if (query === undefined) return path;
  if (query === null || typeof query !== 'object' || Array.isArray(query)) throw new LineError('"query" must be an object of names and values');
  const params = new URLSearchParams();
  try {
    appendQuery(params, query as FieldTree, 'repeat', (name) => `query ${JSON.stringify(name)}`);
  } catch (error) {
    if (error instanceof UsageError) throw new LineError(error.message.replace(/\.$/, ''));
    throw error;
  }
  const text = params.toString();
  if (!text) return path;
  return `${path}${path.includes('?') ? '&' : '?'}${text}`;
}

function headerLines(headers: unknown): string[] {
  if (headers === undefined) return [];
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) throw new LineError('"headers" must be an object of header names and values');
  return Object.entries(headers as Record<string, unknown>).map(([name, value]) => {
    if (typeof value !== 'string') throw new LineError(`header "${name}" must be a string`);
    return `${name}: ${value}`;
  });
}

const noStdin = async (): Promise<string> => {
  throw new LineError('a batch line cannot read stdin');
};

/** Answers kept per method and path: a bulk job repeats a few paths many times. */
const PATH_ANSWERS_KEPT = 10_000;

/**
 * A raw line's method and path against the platform's API description, as plat call warns about them: undefined
 * when the description lists them (or the URL is not the platform's), else what is wrong, in one phrase.
 */
export function pathProblem(index: ApiIndex, baseUrl: string, request: ApiRequest, answers: Map<string, string | undefined>): string | undefined {
  const method = request.method.toUpperCase();
  const asked = `${method} ${request.url.origin}${request.url.pathname}`;
  if (answers.has(asked)) return answers.get(asked);
  const base = new URL(baseUrl);
  let answer: string | undefined;
  const below = request.url.origin === base.origin ? pathBelow(base.pathname, request.url.pathname) : undefined;
  if (below !== undefined) {
    const path = below || '/';
    const onPath = operationsFor(index, path);
    if (onPath.length === 0) answer = `${method} ${path}: the path is not in the platform's API description (plat op lists the operations)`;
    else if (!onPath.some((o) => o.method === method) && !(method === 'HEAD' && onPath.some((o) => o.method === 'GET'))) {
      answer = `${method} ${path}: the platform's API description has no ${method} ${onPath[0]!.path} (it has ${onPath.map((o) => o.method).join(', ')})`;
    }
  }
  if (answers.size < PATH_ANSWERS_KEPT) answers.set(asked, answer);
  return answer;
}
