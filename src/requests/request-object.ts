/**
 * One request built from a batch-shaped object: `{method, path, query?, headers?, body?}` (a raw request, as plat
 * call sends it) or `{op, params?, body?}` (an operation of the platform's API description, checked as plat op
 * checks it). plat batch's lines (batch-line.ts), client.batch() (library/batch.ts) and plat mcp's tools
 * (mcp/call.ts) all build theirs here, so they take and refuse the same shapes, and the query rule (fields.ts
 * appendQuery) and the header rule (http/header-rule.ts) are applied in one place.
 *
 * What is wrong is a RequestProblem; each caller turns it into its own error through `say` (a batch line's phrase,
 * the library's UsageError, a tool error), since those words are part of each one's contract. problemPhrase gives
 * the common words, which a caller keeps where it has no others.
 */
import type { OperationDetail } from '../catalogue/openapi.js';
import type { ParamSpec } from '../catalogue/operation-shape.js';
import { UsageError } from '../errors.js';
import { apiUrl } from '../session/index.js';
import { nestsDeeperThan, tooDeep } from './depth.js';
import { appendQuery, type FieldTree } from './fields.js';
import { headerRecord, TOKEN } from './headers.js';
import type { GivenParam } from './operation.js';
import type { PreparedRequest } from './prepare.js';

export type Operation = OperationDetail & { operationId: string };

export type RequestProblem =
  | { kind: 'not-object' }
  | { kind: 'members'; extra: string[]; op: boolean }
  | { kind: 'method' }
  | { kind: 'path' }
  | { kind: 'query' }
  | { kind: 'headers' }
  | { kind: 'header-value'; name: string }
  | { kind: 'header-refused'; name: string; reason: string }
  | { kind: 'op' }
  | { kind: 'no-operation'; op: string }
  | { kind: 'params' }
  | { kind: 'param-refused'; operationId: string; name: string; reason: string }
  | { kind: 'param-unknown'; operationId: string; name: string; known: string[] }
  /** The URL could not be made from the path (no platform to resolve it against, or not a URL). */
  | { kind: 'url'; message: string }
  /** A shared rule's own sentence (the query rule, a header's value, an operation's parameter or body check). */
  | { kind: 'rule'; message: string };

type Say = (problem: RequestProblem) => Error;

const RAW_KEYS = ['id', 'method', 'path', 'query', 'headers', 'body'];
const OP_KEYS = ['id', 'op', 'params', 'body'];

/** The words a problem is said in where a caller has none of its own: a phrase, no capital, no full stop. */
export function problemPhrase(problem: RequestProblem): string {
  switch (problem.kind) {
    case 'not-object':
      return 'not a JSON object';
    case 'members': {
      const { extra, op } = problem;
      return `unknown member${extra.length > 1 ? 's' : ''} ${extra.map((k) => JSON.stringify(k)).join(', ')} (${op ? 'an op line takes id, op, params, body' : 'a request line takes id, method, path, query, headers, body'})`;
    }
    case 'method':
      return '"method" must be a string such as "GET" (or give "op" for an operation)';
    case 'path':
      return '"path" must be a string such as "/api/courses"';
    case 'query':
      return '"query" must be an object of names and values';
    case 'headers':
      return '"headers" must be an object of header names and values';
    case 'header-value':
      return `header "${problem.name}" must be a string`;
    case 'header-refused':
      return `header ${problem.name} is not sent: ${problem.reason}`;
    case 'op':
      return '"op" must be an operationId (plat op lists them)';
    case 'no-operation':
      return `the platform's API has no operation "${problem.op}" (plat op lists them)`;
    case 'params':
      return '"params" must be an object of parameter names and values';
    case 'param-refused':
      return `${problem.operationId}'s header parameter ${problem.name} is not taken from input: ${problem.reason}`;
    case 'param-unknown': {
      const { operationId, name, known } = problem;
      return `${operationId} has no parameter "${name}"${known.length ? ` (it takes ${known.join(', ')})` : ''}`;
    }
    case 'url':
    case 'rule':
      return problem.message.replace(/\.$/, '');
  }
}

export interface RawRules {
  baseUrl: string | undefined;
  /** What to do when there is no platform to resolve a path against (the caller's way to name one). */
  noBaseUrl: string;
  say: Say;
}

export interface OpRules {
  baseUrl: string | undefined;
  say: Say;
  /** The parameter a name stands for; by default the operation's parameter of that name. */
  param?: (name: string) => ParamSpec | undefined;
  /** A value as the texts of its parameter, or undefined when it counts as not given. */
  values?: (name: string, value: unknown) => string[] | undefined;
  /** How a parameter is named in the operation's messages; by default `params.<name>`. */
  flag?: (name: string) => string;
}

export interface ObjectRules extends RawRules {
  /** The operation of this id, or undefined. Without it an object naming an op is a raw request with a member too many. */
  operation?: (id: string) => Promise<Operation | undefined>;
}

/** A batch-shaped object of either kind (the members each kind takes, and no others) as the request it stands for. */
export async function buildRequest(object: unknown, rules: ObjectRules): Promise<PreparedRequest> {
  const { say } = rules;
  if (object === null || typeof object !== 'object' || Array.isArray(object)) throw say({ kind: 'not-object' });
  const given = object as Record<string, unknown>;
  const isOp = rules.operation !== undefined && 'op' in given;
  const allowed = isOp ? OP_KEYS : RAW_KEYS;
  const extra = Object.keys(given).filter((key) => !allowed.includes(key));
  if (extra.length > 0) throw say({ kind: 'members', extra, op: isOp });
  if (!isOp) return buildRawRequest(given, rules);
  if (typeof given.op !== 'string' || given.op === '') throw say({ kind: 'op' });
  const op = await rules.operation!(given.op);
  if (!op) throw say({ kind: 'no-operation', op: given.op });
  // A string body is the body's text (read as --input would read it); anything else is sent as JSON.
  return opRequest(op, givenParams(op, given.params, rules), given.body, rules);
}

/** `{method, path, query?, headers?, body?}` as a request: members other than these are the caller's to check. */
export function buildRawRequest(given: Record<string, unknown>, rules: RawRules): PreparedRequest {
  const { say } = rules;
  const { method, path, query, headers } = given;
  assertShallow({ query, headers, body: given.body }, say);
  if (typeof method !== 'string' || method === '') throw say({ kind: 'method' });
  if (typeof path !== 'string' || path === '') throw say({ kind: 'path' });
  if (!TOKEN.test(method)) throw say({ kind: 'rule', message: `"${method}" is not an HTTP method.` });
  // null, as JSON writers give for an absent member, is no query and no headers.
  if (query !== undefined && query !== null && !isPlainObject(query)) throw say({ kind: 'query' });
  if (headers !== undefined && headers !== null && !isPlainObject(headers)) throw say({ kind: 'headers' });
  let url: URL;
  try {
    url = apiUrl(path, rules.baseUrl, rules.noBaseUrl);
  } catch (error) {
    if (error instanceof UsageError) throw say({ kind: 'url', message: error.message });
    throw error;
  }
  if (query) addQuery(url, query as FieldTree, say);
  const sameOrigin = rules.baseUrl !== undefined && url.origin === new URL(rules.baseUrl).origin;
  const sent = headersOf((headers ?? {}) as Record<string, unknown>, sameOrigin, say);
  sent.accept ??= 'application/json, */*;q=0.8';
  let jsonBody: string | undefined;
  if (given.body !== undefined) {
    const type = sent['content-type'];
    // A string body with a content type of its own is sent as that text; anything else is JSON.
    if (typeof given.body === 'string' && type !== undefined && !/\bjson\b/i.test(type)) jsonBody = given.body;
    else {
      jsonBody = JSON.stringify(given.body);
      sent['content-type'] ??= 'application/json';
    }
  }
  return { method: method.toUpperCase(), url, headers: sent, jsonBody, sameOrigin };
}

/** The query rule: a list repeats its name, an object's members are name[member], anything else is refused by name. */
function addQuery(url: URL, query: FieldTree, say: Say): void {
  const params = new URLSearchParams();
  try {
    appendQuery(params, query, 'repeat', (name) => `query ${JSON.stringify(name)}`);
  } catch (error) {
    if (error instanceof UsageError) throw say({ kind: 'rule', message: error.message });
    throw error;
  }
  const text = params.toString();
  // Added to the query the path was given with, which stays as it was written.
  if (text) url.search = url.search.length > 1 ? `${url.search}&${text}` : text;
}

/** The header rule (headers.ts), its problems said as a batch line's. */
function headersOf(headers: Record<string, unknown>, sameOrigin: boolean, say: Say): Record<string, string> {
  return headerRecord(Object.entries(headers), sameOrigin, (problem) => {
    switch (problem.kind) {
      case 'header-name':
        return say({ kind: 'rule', message: `header ${JSON.stringify(problem.name)} is not a header name.` });
      case 'header-text':
        return say({ kind: 'rule', message: `header ${problem.name}: the value has a line break, control character or non-Latin-1 character.` });
      default:
        return say(problem);
    }
  });
}

/** An operation's parameters by name, each one it takes and none it refuses (header parameters the rule keeps). */
export function givenParams(op: Operation, params: unknown, rules: OpRules): GivenParam[] {
  const { say } = rules;
  assertShallow({ params }, say);
  params ??= {};
  if (typeof params !== 'object' || Array.isArray(params)) throw say({ kind: 'params' });
  const lookup = rules.param ?? ((name: string) => op.parameters.find((p) => p.name === name));
  const valuesOf = rules.values ?? ((_: string, value: unknown) => (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))));
  const list: GivenParam[] = [];
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    const param = lookup(name);
    const refused = op.refusedHeaders?.find((r) => r.name.toLowerCase() === name.trim().toLowerCase());
    if (!param && refused) throw say({ kind: 'param-refused', operationId: op.operationId, name: refused.name, reason: refused.reason });
    if (!param) throw say({ kind: 'param-unknown', operationId: op.operationId, name, known: op.parameters.map((p) => p.name) });
    const values = valuesOf(name, value);
    if (values !== undefined) list.push({ param, flag: rules.flag?.(name) ?? `params.${name}`, values });
  }
  return list;
}

/**
 * The request of an operation with these parameters and body, as plat op checks and builds it (requests/operation.ts):
 * every parameter and the body checked against the description.
 */
export async function opRequest(op: Operation, given: GivenParam[], body: unknown, rules: Pick<OpRules, 'baseUrl' | 'say'>): Promise<PreparedRequest> {
  assertShallow({ body }, rules.say);
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const { prepareOpRequest } = await import('./operation.js');
  let prepared: PreparedRequest;
  try {
    prepared = await prepareOpRequest(
      op,
      given,
      { headers: [], fields: [], typedFields: [], input: text === undefined ? undefined : '-' },
      rules.baseUrl,
      async () => text ?? '',
    );
  } catch (error) {
    if (error instanceof UsageError) throw rules.say({ kind: 'rule', message: error.message });
    throw error;
  }
  if (prepared.inputFrom === '-') {
    // A non-JSON content type: the body's text as given (nothing here ever reads stdin).
    prepared.inputFrom = undefined;
    prepared.jsonBody = text;
  }
  return prepared;
}

/**
 * Every member nested at most MAX_NESTING deep (depth.ts), before anything walks it: the query rule, the header
 * rule, JSON.stringify and the body's check all recurse. The member is named ("body", "query").
 */
function assertShallow(members: Record<string, unknown>, say: Say): void {
  for (const [name, value] of Object.entries(members)) {
    if (nestsDeeperThan(value)) throw say({ kind: 'rule', message: tooDeep(`"${name}"`) });
  }
}

function isPlainObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
