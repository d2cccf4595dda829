/**
 * The tools `plat mcp` offers, made from the platform's API description (the cached /openapi.json, catalogue/): one
 * per operation, plus `call` (any path on the platform's origin) and `whoami`. Everything taken from the document is
 * hostile input: names are reduced to what MCP allows, descriptions sanitised and bounded, schemas bounded
 * (schema.ts), and the number of tools capped.
 *
 * Least privilege: only read operations (GET, HEAD, OPTIONS) unless --allow-write; --for offers exactly the
 * operations named; an operation whose scopes the session lacks is offered with a description that says so and
 * what the person must run (the server never signs in by itself).
 */
import type { FullApiIndex, OperationDetail } from '../catalogue/openapi.js';
import { missingScopes } from '../catalogue/openapi.js';
import type { ParamSpec } from '../catalogue/operation-shape.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { suggest } from '../session/index.js';
import { didYouMean, sanitize } from '../terminal/text.js';
import { boundSchema, newBudget } from './schema.js';

export const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** MCP's tool names (and the property names hosts accept): letters, digits, _ . -, bounded. */
const MCP_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** A document with more operations than this is offered this many (the rest said on stderr). */
const MAX_TOOLS = 300;
const MAX_DESCRIPTION = 1200;
/** --paginate's caps for a tool: what an agent can use in one answer. */
export const PAGE_LIMITS = { maxPages: 20, maxItems: 1000 };

export interface ToolAnnotations {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

interface ToolBase {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  annotations: ToolAnnotations;
}

export interface OperationTool extends ToolBase {
  kind: 'operation';
  op: OperationDetail & { operationId: string };
  /** Argument name → the parameter it fills. */
  params: Map<string, ParamSpec>;
  /** The argument that carries the request body (`body`, unless a parameter has that name); undefined: none. */
  bodyKey?: string;
  /** The argument that asks for every page (GET only). */
  paginateKey?: string;
  /** The scopes the session lacks for it ([]: none, or unknown). */
  missing: string[];
  /** The session was made with the device flow: the login that adds a scope is a device login too. */
  device: boolean;
}

export interface CallTool extends ToolBase {
  kind: 'call';
  allowWrite: boolean;
}

interface WhoamiTool extends ToolBase {
  kind: 'whoami';
}

export type Tool = OperationTool | CallTool | WhoamiTool;

export interface ToolOptions {
  allowWrite: boolean;
  /** --for: exactly these operations (by operationId). */
  only?: string[];
  /** The scopes the session holds; undefined when plat cannot know (PLAT_TOKEN, no session). */
  held?: readonly string[];
  /** The session was made with the device flow (its fixes say --device). */
  device?: boolean;
  /** Where a warning goes (the server says each once); default stderr. */
  warn?: (text: string) => void;
}

/** What the MCP annotations say for a method. MCP takes a missing destructiveHint as true, so POST says false. */
export function annotationsFor(method: string): ToolAnnotations {
  if (READ_METHODS.has(method)) return { readOnlyHint: true, openWorldHint: false };
  if (method === 'POST') return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
  if (method === 'PUT' || method === 'DELETE') return { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
  return { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
}

/** The name --for takes for plat's own whoami tool (not an operation of the document). */
export const WHOAMI = 'whoami';

/** The operations --for and --allow-write select (a usage error, exit 2, for a name the document lacks). */
export function selectOperations(index: FullApiIndex, options: Pick<ToolOptions, 'allowWrite' | 'only'>): Array<OperationDetail & { operationId: string }> {
  const named = index.operations.filter((op): op is OperationDetail & { operationId: string } => op.operationId !== null);
  if (!options.only || options.only.length === 0) return named.filter((op) => options.allowWrite || READ_METHODS.has(op.method));
  const chosen: Array<OperationDetail & { operationId: string }> = [];
  for (const id of new Set(options.only)) {
    if (id === WHOAMI) continue;
    const op = named.find((o) => o.operationId === id) ?? single(named.filter((o) => o.operationId.toLowerCase() === id.toLowerCase()));
    if (!op) {
      throw new UsageError(`--for: the platform's API has no operation "${sanitize(id, 100)}".${didYouMean(id, named.map((o) => o.operationId), 1)} plat op lists them.`);
    }
    if (!options.allowWrite && !READ_METHODS.has(op.method)) {
      throw new UsageError(`--for ${op.operationId}: it changes data (${op.method}), so plat mcp offers it only with --allow-write.`);
    }
    if (!chosen.includes(op)) chosen.push(op);
  }
  return chosen;
}

function single<T>(list: T[]): T | undefined {
  return list.length === 1 ? list[0] : undefined;
}

export function buildTools(ctx: Context, index: FullApiIndex, options: ToolOptions): Tool[] {
  const taken = new Set<string>();
  const unique = (wanted: string) => {
    let name = wanted;
    for (let n = 2; taken.has(name); n++) name = `${wanted.slice(0, 60)}_${n}`;
    taken.add(name);
    return name;
  };
  const tools: Tool[] = [];
  const only = options.only?.length ? options.only : undefined;
  if (!only || only.includes(WHOAMI)) tools.push(whoamiTool(unique(WHOAMI), index.baseUrl));
  if (!only) tools.push(callTool(unique('call'), index, options.allowWrite));
  const operations = selectOperations(index, options);
  if (operations.length > MAX_TOOLS) {
    (options.warn ?? ctx.io.warn)(`The platform's API description lists ${operations.length} operations; plat mcp offers the first ${MAX_TOOLS}. Name the ones you need with --for.`);
  }
  for (const op of operations.slice(0, MAX_TOOLS)) tools.push(operationTool(ctx, unique(toolName(op)), op, options.held, Boolean(options.device)));
  return tools;
}

/** The operationId when MCP allows it as a name; otherwise its letters and digits, or the method and path. */
export function toolName(op: { operationId: string | null; method: string; path: string }): string {
  const id = op.operationId ?? '';
  if (MCP_NAME.test(id)) return id;
  return mcpName(id) || mcpName(`${op.method.toLowerCase()}_${op.path}`) || 'operation';
}

function mcpName(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/_{2,}/g, '_').replace(/^[_.-]+|[_.-]+$/g, '').slice(0, 64);
}

function operationTool(ctx: Context, name: string, op: OperationDetail & { operationId: string }, held: readonly string[] | undefined, device: boolean): OperationTool {
  const budget = newBudget();
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const params = new Map<string, ParamSpec>();
  for (const param of op.parameters) {
    const key = MCP_NAME.test(param.name) ? param.name : mcpName(param.name);
    // Two parameters of one name (a query and a header id): the first is offered, the other cannot be told apart.
    if (!key || params.has(key)) continue;
    params.set(key, param);
    const schema = boundSchema(param.schema, budget);
    const where = param.in === 'path' ? 'path' : param.in === 'query' ? 'query' : 'header';
    const about = [param.description, `(${where} parameter${key !== param.name ? ` ${sanitize(param.name, 100)}` : ''})`].filter(Boolean).join(' ');
    properties[key] = { ...schema, description: sanitize(about, 400) };
    if (param.required) required.push(key);
  }
  const free = (wanted: string) => {
    for (let name = wanted; ; name = `plat_${name}`) if (!params.has(name)) return name;
  };
  let bodyKey: string | undefined;
  if (op.body) {
    bodyKey = free('body');
    const schema = op.body.schema ? boundSchema(op.body.schema, budget) : {};
    properties[bodyKey] = { ...schema, description: sanitize(`The request body (${op.body.contentType}).${typeof schema.description === 'string' ? ` ${schema.description}` : ''}`, 400) };
    if (op.body.required) required.push(bodyKey);
  }
  let paginateKey: string | undefined;
  if (op.method === 'GET') {
    paginateKey = free('paginate');
    properties[paginateKey] = {
      type: 'boolean',
      description: `true: follow every page of a list (up to ${PAGE_LIMITS.maxPages} pages and ${PAGE_LIMITS.maxItems} items) and return its items as one array.`,
    };
  }
  const missing = held ? missingScopes(op, held) : [];
  return {
    kind: 'operation',
    name,
    description: describeOperation(ctx, op, missing, device),
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    annotations: { title: sanitize(op.summary ?? op.operationId, 100), ...annotationsFor(op.method) },
    op,
    params,
    bodyKey,
    paginateKey,
    missing,
    device,
  };
}

function describeOperation(ctx: Context, op: OperationDetail & { operationId: string }, missing: string[], device: boolean): string {
  const parts: string[] = [];
  if (op.summary) parts.push(ensureStop(sanitize(op.summary, 200)));
  if (op.description && op.description !== op.summary) parts.push(sanitize(op.description, 600));
  parts.push(`${op.method} ${sanitize(op.path, 200)} on the platform (operationId ${sanitize(op.operationId, 100)}).`);
  parts.push(scopeSentence(op));
  if (missing.length > 0) parts.push(lacking(ctx, op.operationId, missing, device));
  for (const refused of op.refusedHeaders ?? []) parts.push(`Its header parameter ${sanitize(refused.name, 100)} is not offered: ${refused.reason}.`);
  // sanitize turns each run of unsafe characters into a space: one space between words is enough.
  return sanitize(sanitize(parts.join(' '), 0).replace(/\s+/g, ' '), MAX_DESCRIPTION);
}

function scopeSentence(op: OperationDetail): string {
  const scoped = (op.security ?? []).filter((alt) => alt.length > 0);
  const anonymous = (op.security ?? []).some((alt) => alt.length === 0);
  if (op.security === null) return 'The API description does not say which scopes it needs.';
  if (scoped.length === 0) return anonymous ? 'It needs no scope.' : 'It needs a credential plat does not hold.';
  const alternatives = scoped.map((alt) => alt.join(' + '));
  return `Needs the scope${scoped[0]!.length > 1 || scoped.length > 1 ? 's' : ''} ${alternatives.join(' or ')}.`;
}

/** The sentence an operation the session cannot call carries, in its description and as its tool error. */
export function lacking(ctx: Context, operationId: string, missing: string[], device: boolean): string {
  const login = suggest(ctx, ['login', ...missing.flatMap((scope) => ['--add-scope', scope])], { device });
  const plural = missing.length > 1 ? 's' : '';
  return `This session lacks the scope${plural} ${missing.join(' ')}, so ${sanitize(operationId, 100)} is refused until the person signs in again adding ${plural ? 'them' : 'it'}: ${login} (plat mcp never signs in by itself).`;
}

function ensureStop(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/** The whoami tool; `baseUrl` undefined before any login names a platform. */
export function whoamiTool(name: string, baseUrl: string | undefined): WhoamiTool {
  return {
    kind: 'whoami',
    name,
    description: `Who the person signed in to ${baseUrl ? sanitize(baseUrl, 200) : 'the platform'} is (OpenID Connect UserInfo), and the scopes the session holds. The tools act as this person.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { title: 'Who am I', ...annotationsFor('GET') },
  };
}

function callTool(name: string, index: FullApiIndex, allowWrite: boolean): CallTool {
  const methods = allowWrite ? ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] : ['GET', 'HEAD'];
  const properties: Record<string, unknown> = {
    method: { type: 'string', enum: methods, description: allowWrite ? 'The HTTP method.' : 'The HTTP method (read only: plat mcp runs without --allow-write).' },
    path: { type: 'string', pattern: '^/(?!/)', description: `A path on the platform (${sanitize(index.baseUrl, 200)}), starting with /, query string allowed. Nothing off the platform's origin is called.` },
    query: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] }, description: 'Query parameters to add.' },
    paginate: { type: 'boolean', description: `GET only. true: follow every page of a list (up to ${PAGE_LIMITS.maxPages} pages and ${PAGE_LIMITS.maxItems} items) and return its items as one array.` },
  };
  if (allowWrite) properties.body = { description: 'A JSON request body (POST, PUT, PATCH).' };
  return {
    kind: 'call',
    name,
    allowWrite,
    description: `Call any path of the platform's API at ${sanitize(index.baseUrl, 200)} as the signed-in person, for what no other tool covers. Only the platform's own origin is called.`,
    inputSchema: { type: 'object', properties, required: ['method', 'path'], additionalProperties: false },
    annotations: allowWrite ? { title: 'Call the platform', readOnlyHint: false, destructiveHint: true, openWorldHint: false } : { title: 'Call the platform', ...annotationsFor('GET') },
  };
}

/** What tools/list sends for a tool: the MCP fields only. */
export function listed(tool: Tool): { name: string; description: string; inputSchema: Tool['inputSchema']; annotations: ToolAnnotations; title?: string } {
  return { name: tool.name, ...(tool.annotations.title ? { title: tool.annotations.title } : {}), description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations };
}
