/**
 * Running one `plat mcp` tool: its arguments checked and turned into a request the way `plat op` builds one
 * (requests/operation.ts: parameters and body checked against the document), sent through the session's one authenticated
 * path (session/request.ts: token choice, origin rule, refresh under the lock, 401 retry), lists paged with
 * --paginate's engine (session/paging/paginate.ts), and the answer made into a tool result: the body, capped, with JSON
 * objects as structured content. Every failure is a tool error in plat's own sentence. No token, code or secret
 * the process holds reaches a result: each text is scrubbed of them (the context's KnownSecrets) before it leaves.
 */
import { isPublicOperation } from '../catalogue/openapi.js';
import type { Context } from '../context.js';
import { PlatError } from '../errors.js';
import { readBodyUpTo } from '../http/read-body.js';
import { identify, openClient, readPages, responseFailure, responseHeader, type ApiClient, type ApiRequest, type ApiResponse, type RequestGovernor } from '../session/index.js';
import { sanitize } from '../terminal/text.js';
import { MAX_STRUCTURED_DEPTH } from './bounds.js';
import { MAX_NESTING, nestsDeeperThan, tooDeep } from '../requests/depth.js';
import { lacking, PAGE_LIMITS, READ_METHODS, type CallTool, type OperationTool, type Tool } from './tools.js';
import { apiRequestOf } from '../requests/api-request.js';
import { buildRawRequest, givenParams, opRequest, problemPhrase, type OpRules, type RequestProblem } from '../requests/request-object.js';

/** The most of a body a tool result carries; an agent's context is the limit, not memory. */
const MAX_RESULT_BYTES = 256 * 1024;
/** Of an error response's body, this much goes with the error sentence. */
const ERROR_BODY_BYTES = 2048;
/** An agent waits for its tool: a request that takes longer than this is ended. */
const TOOL_DEADLINE_MS = 60_000;

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

type Args = Record<string, unknown>;

/** A failure the agent can act on, said in plat's words. */
class ToolError extends PlatError {}

/**
 * The server's one pace (batch/governor.ts, plat batch's, reached through the session's front door): every request of every tool goes under it, so a
 * 429/503 from the platform holds them all, and each is retried as plat batch retries its lines.
 */
export interface Pace {
  governor: RequestGovernor;
  retries: number;
}

/** `signal`: the client cancelled the call; `failed` may put a failure in other words before it is the tool error. */
export async function runTool(ctx: Context, tool: Tool, args: Args, signal?: AbortSignal, failed?: (error: unknown) => unknown, pace?: Pace): Promise<ToolResult> {
  try {
    // Before anything walks an argument (JSON.stringify of a body recurses): past the bound, named (requests/depth.ts).
    const deep = Object.keys(args).find((key) => nestsDeeperThan(args[key], MAX_NESTING));
    if (deep !== undefined) throw new ToolError(`${tool.name}: ${tooDeep(`argument "${sanitize(deep, 64)}"`)}`);
    if (tool.kind === 'whoami') return await whoami(ctx);
    if (tool.kind === 'call') return await callAnyPath(ctx, tool, args, signal, pace);
    return await callOperation(ctx, tool, args, signal, pace);
  } catch (error) {
    return errorResult(ctx, failed ? failed(error) : error);
  }
}

export function errorResult(ctx: Context, error: unknown): ToolResult {
  const message =
    error instanceof PlatError
      ? error.message
      : `Unexpected failure: ${(error as Error)?.message ?? String(error)}. Run plat with --verbose for details, and report it if it repeats.`;
  return { isError: true, content: [{ type: 'text', text: safeText(ctx, message) }] };
}

/** Text that leaves plat for the agent: no control or escape sequence, no secret this process holds. */
function safeText(ctx: Context, text: string, max = 0): string {
  return ctx.secrets.scrub(sanitize(text, max, { multiline: true }));
}

async function whoami(ctx: Context): Promise<ToolResult> {
  const who = await identify(ctx, { quiet: true });
  const structured = {
    claims: who.claims,
    platform: who.baseUrl,
    profile: who.profile.name,
    scopes: who.source.kind === 'session' ? who.source.session.scopes : null,
  };
  return jsonResult(ctx, structured);
}

async function callOperation(ctx: Context, tool: OperationTool, args: Args, signal: AbortSignal | undefined, pace: Pace | undefined): Promise<ToolResult> {
  const { op } = tool;
  if (tool.missing.length > 0) throw new ToolError(lacking(ctx, op.operationId, tool.missing, tool.device));
  const params: Args = {};
  let body: string | undefined;
  let paginate = false;
  for (const [key, value] of Object.entries(args)) {
    if (key === tool.bodyKey) body = JSON.stringify(value);
    else if (key === tool.paginateKey) paginate = value === true;
    else params[key] = value;
  }
  const rules: OpRules = {
    baseUrl: undefined,
    say: (problem) => new ToolError(toolWords(tool, problem)),
    param: (key) => tool.params.get(key),
    // null is an argument not given, as an agent's JSON often says it.
    values: (key, value) => (value === undefined || value === null ? undefined : (Array.isArray(value) ? value : [value]).map((v) => argText(key, v))),
    flag: (key) => key,
  };
  const given = givenParams(op, params, rules);
  const missing = [...tool.params].filter(([, p]) => p.required && !given.some((g) => g.param === p)).map(([key]) => key);
  if (op.body?.required && body === undefined) missing.push(tool.bodyKey!);
  if (missing.length > 0) throw new ToolError(`${tool.name} needs ${missing.join(', ')}; the tool's input schema says what each is.`);
  if (body !== undefined && op.body && !/\bjson\b/i.test(op.body.contentType)) {
    throw new ToolError(`${tool.name} takes ${sanitize(op.body.contentType, 80)}, and plat mcp sends JSON bodies only: use plat op ${op.operationId} --input <file> from a terminal.`);
  }
  const client = governed(await operationClient(ctx, op), pace);
  const prepared = await opRequest(op, given, body, { ...rules, baseUrl: client.baseUrl });
  // A JSON body was read from the argument above; nothing may ever read plat's stdin, the agent host's pipe.
  if (prepared.inputFrom !== undefined || !prepared.sameOrigin) throw new ToolError(`${tool.name}: plat mcp could not build its request.`);
  const request = apiRequestOf(prepared, { timeoutMs: TOOL_DEADLINE_MS, signal });
  return paginate ? pages(ctx, client, request) : send(ctx, client, request);
}

/**
 * The session's client, as plat call goes: required for an operation that needs a token; a public one (every
 * alternative of its `security` empty) goes with the session when there is one and anonymously when there is none.
 */
async function operationClient(ctx: Context, op: OperationTool['op']): Promise<Client> {
  // 'auto' is plat call's rule: anonymous without a session, but a session that ended without the person's word
  // is a tool error naming the login (never anonymous data where there was personal data before).
  return openClient(ctx, { auth: isPublicOperation(op) ? 'auto' : 'required' });
}

async function callAnyPath(ctx: Context, tool: CallTool, args: Args, signal: AbortSignal | undefined, pace: Pace | undefined): Promise<ToolResult> {
  const method = typeof args.method === 'string' ? args.method.toUpperCase() : '';
  const path = typeof args.path === 'string' ? args.path : '';
  if (!method || !path) throw new ToolError('call needs method and path (a path on the platform, starting with /).');
  if (!/^[A-Z]{1,16}$/.test(method)) throw new ToolError(`"${sanitize(method, 20)}" is not an HTTP method.`);
  if (!READ_METHODS.has(method) && !tool.allowWrite) {
    throw new ToolError(`${method} changes data, and plat mcp runs read-only: the person must start it with --allow-write to allow that.`);
  }
  // Only a path: a URL, or a path that a URL parser reads as another host (//host, \\host), is refused outright.
  if (!path.startsWith('/') || path.startsWith('//') || /[\\\s]/.test(path.slice(0, 2)) || /[\u0000-\u001f\u007f]/.test(path)) {
    throw new ToolError(`call takes a path on the platform starting with / (got "${sanitize(path, 100)}"); nothing off the platform's origin is called.`);
  }
  if (args.body !== undefined && (READ_METHODS.has(method) || method === 'DELETE')) throw new ToolError(`call: a ${method} request takes no body here; use query.`);
  const client = governed(await openClient(ctx, { auth: 'required' }), pace);
  const built = buildRawRequest(
    // No headers: the body is always sent as JSON.
    { method, path, query: args.query, body: args.body },
    { baseUrl: client.baseUrl, noBaseUrl: 'the profile has no platform', say: (problem) => new ToolError(callWords(problem)) },
  );
  if (!client.baseUrl || built.url.origin !== new URL(client.baseUrl).origin) {
    throw new ToolError(`${sanitize(path, 100)} is not on the platform's origin; nothing else is called.`);
  }
  const request = apiRequestOf(built, { timeoutMs: TOOL_DEADLINE_MS, signal });
  if (args.paginate === true) {
    if (method !== 'GET') throw new ToolError('call: only GET lists are paged.');
    return pages(ctx, client, request);
  }
  return send(ctx, client, request);
}

/** An operation tool's problems in plat mcp's words: an agent names arguments, not a line's members. */
function toolWords(tool: OperationTool, problem: RequestProblem): string {
  switch (problem.kind) {
    case 'param-refused':
      return `${tool.name}'s header parameter ${sanitize(problem.name, 100)} is not taken from arguments: ${problem.reason}.`;
    case 'param-unknown': {
      const known = [...tool.params.keys(), ...(tool.bodyKey ? [tool.bodyKey] : []), ...(tool.paginateKey ? [tool.paginateKey] : [])];
      return `${tool.name} takes no argument "${sanitize(problem.name, 64)}"${known.length ? `; it takes ${known.join(', ')}` : '; it takes none'}.`;
    }
    case 'rule':
    case 'url':
      return problem.message;
    default:
      return `${tool.name}: ${problemPhrase(problem)}.`;
  }
}

/** The call tool's problems: its own words for the query, the shared rule's otherwise. */
function callWords(problem: RequestProblem): string {
  if (problem.kind === 'query') return 'call: query must be an object of names and values.';
  if (problem.kind === 'url') return problem.message;
  return `call: ${problemPhrase(problem)}.`;
}

/** An argument as the text a query, path or header parameter carries. */
function argText(name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ToolError(`${sanitize(name, 64)} takes a string, number or true/false, not ${value === null ? 'null' : Array.isArray(value) ? 'a list' : 'an object'}.`);
}

type Client = ApiClient;

/** The client with every request it sends (each page of a list too) under the server's pace. */
function governed(client: Client, pace: Pace | undefined): Client {
  if (!pace) return client;
  return {
    get baseUrl() {
      return client.baseUrl;
    },
    get profile() {
      return client.profile;
    },
    send: (request, options) => client.send({ ...request, governor: pace.governor, retries: request.retries ?? pace.retries }, options),
  };
}

async function send(ctx: Context, client: Client, request: ApiRequest): Promise<ToolResult> {
  const response = await client.send(request);
  const failure = responseFailure(ctx, request, response);
  if (failure) {
    const { bytes } = await readBody(response, request, ERROR_BODY_BYTES);
    const sentence = /[.!?]$/.test(failure.message) ? failure.message : `${failure.message}.`;
    const said = bytes.length > 0 ? ` The platform answered: ${bytes.toString('utf8')}` : '';
    return { isError: true, content: [{ type: 'text', text: safeText(ctx, `${sentence}${said}`, sentence.length + 2200) }] };
  }
  if (request.method === 'HEAD') {
    response.body.resume();
    return textResult(ctx, headLine(response));
  }
  if (response.status >= 300) {
    response.body.resume();
    const location = responseHeader(response, 'location');
    return textResult(ctx, `${headLine(response)}${location ? ` to ${location}` : ''}: plat does not follow redirects (no token follows one). Call the new path if it is on the platform.`);
  }
  const { bytes, cut } = await readBody(response, request, MAX_RESULT_BYTES);
  // An empty answer (204, a 201 without a body) still says what happened.
  if (bytes.length === 0) return textResult(ctx, `${headLine(response)} (no body)`);
  const text = bytes.toString('utf8');
  if (cut) {
    const length = Number(responseHeader(response, 'content-length'));
    const size = Number.isFinite(length) && length > 0 ? `${length} bytes` : `more than ${MAX_RESULT_BYTES} bytes`;
    return {
      content: [
        { type: 'text', text: safeText(ctx, text) },
        { type: 'text', text: `[plat: the response is ${size}; only its first ${MAX_RESULT_BYTES} bytes are above, so it is cut and may not parse. Ask for less: a narrower query, a smaller page size.]` },
      ],
    };
  }
  if (/\bjson\b/i.test(responseHeader(response, 'content-type') ?? '')) {
    try {
      return jsonResult(ctx, JSON.parse(text) as unknown, text);
    } catch {
      // not JSON after all: the text as it came
    }
  }
  return textResult(ctx, text);
}

async function pages(ctx: Context, client: Client, request: ApiRequest): Promise<ToolResult> {
  // --paginate follows a next link off the platform without the token; an agent's tools call nowhere else at all.
  const origin = request.url.origin;
  const onPlatform: Client = {
    ...client,
    send: (page) =>
      page.url.origin === origin
        ? client.send(page)
        : Promise.reject(new ToolError(`The list's next page is on ${sanitize(page.url.origin, 100)}, not on the platform: plat mcp calls nothing else, so it stops there.`)),
  };
  const list = await readPages(ctx, onPlatform, request, { ...PAGE_LIMITS, maxPageBytes: MAX_RESULT_BYTES * 4 });
  const items: unknown[] = [];
  let count = 0;
  for await (const page of list) {
    items.push(...page.items);
    count = page.number;
  }
  if (nestsDeeperThan(items, MAX_STRUCTURED_DEPTH)) {
    throw new ToolError(`An item of the list nests deeper than ${MAX_STRUCTURED_DEPTH} levels, more than plat mcp passes on as JSON: call the list without paginate to have its pages as text.`);
  }
  const structured = { items, pages: count, complete: !list.limited };
  const text = JSON.stringify(structured);
  if (Buffer.byteLength(text) > MAX_RESULT_BYTES) {
    // Whole items only: as many as fit, and the count of the rest.
    let size = 64;
    let kept = 0;
    for (const item of items) {
      size += Buffer.byteLength(JSON.stringify(item) ?? 'null') + 1;
      if (size > MAX_RESULT_BYTES) break;
      kept++;
    }
    return jsonResult(ctx, { items: items.slice(0, kept), pages: count, complete: false, note: `plat kept the first ${kept} of ${items.length} items to stay under ${MAX_RESULT_BYTES} bytes; ask for less.` });
  }
  if (list.limited) {
    return jsonResult(ctx, { ...structured, note: `plat stopped at ${PAGE_LIMITS.maxPages} pages or ${PAGE_LIMITS.maxItems} items; the list goes on. Ask for less, or page it with the list's own parameters.` });
  }
  return jsonResult(ctx, structured, text);
}

async function readBody(response: ApiResponse, request: ApiRequest, max: number): Promise<{ bytes: Buffer; cut: boolean }> {
  try {
    return await readBodyUpTo(response.body, max);
  } catch (error) {
    const { bodyReadError } = await import('../http/body-error.js');
    throw bodyReadError(error, request.url);
  }
}

function headLine(response: ApiResponse): string {
  return `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
}

function textResult(ctx: Context, text: string): ToolResult {
  return { content: [{ type: 'text', text: safeText(ctx, text) }] };
}

/**
 * A JSON value as the result: its text (as received when there is one), and the value itself as structured content
 * when it is an object (MCP's structuredContent is one). Both scrubbed: the text of every spelling of a secret
 * (`\u0041…`, `\/`, `%41`), the value of every string in it, since parsing undid the escapes the text scrub sees.
 */
function jsonResult(ctx: Context, value: unknown, received?: string): ToolResult {
  if (received !== undefined && nestsDeeperThan(value, MAX_STRUCTURED_DEPTH)) return deepResult(ctx, received);
  const text = received ?? JSON.stringify(value);
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value);
  return { content: [{ type: 'text', text: safeText(ctx, text) }], ...(structured ? { structuredContent: ctx.secrets.scrubValue(value) as Record<string, unknown> } : {}) };
}

/** JSON nested past the bound: its text as received, with a note, and no structured content (it could not be sent). */
function deepResult(ctx: Context, received: string): ToolResult {
  return {
    content: [
      { type: 'text', text: safeText(ctx, received) },
      { type: 'text', text: `[plat: the response nests deeper than ${MAX_STRUCTURED_DEPTH} levels, so it is given as text only, not as structured content.]` },
    ],
  };
}
