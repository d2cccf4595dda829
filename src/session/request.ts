/**
 * The one authenticated-request path, used by `plat call`, pagination, `plat op` and the Node library (as gh's
 * factory HTTP client carries auth, so no command handles tokens itself):
 * - token choice and the origin rule: the session's token goes only to URLs on the session's own origin; anything
 *   else is called without it, with one note saying why;
 * - a token about to expire is refreshed first (under the cross-process lock), and on 401 invalid_token once more,
 *   with the request replayed once;
 * - retries: 429 and 503 honour Retry-After (bounded by MAX_RETRY_AFTER_MS), otherwise exponential backoff with
 *   jitter; 502, 504 and connection resets only for idempotent methods; each retry is one line on stderr;
 * - step-up, where the caller asks for it (`send(request, { stepUp })`): a 403 insufficient_scope naming scopes the
 *   session lacks, at a terminal, asks the person to sign in again adding them (login/step-up.ts), and the request
 *   is sent once more with the new session.
 */
import { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { NetworkError, UsageError } from '../errors.js';
import { headerKey, refusedHeader } from '../http/header-rule.js';
import { readBodyUpTo } from '../http/read-body.js';
import type { HttpResponse } from '../http/types.js';
import { parseBearerChallenge } from '../oauth/www-authenticate.js';
import type { Profile, StoredSession } from '../store/types.js';
import { sleep } from '../sleep.js';
import { rememberResourceMetadata } from './discovery/resource-hint.js';
import { parseBaseUrl } from './profile/base-url.js';
import type { ActiveSession } from './tokens/access.js';
import { freshToken } from './tokens/refresh.js';
import { bindSession, type Binding, type TokenSource } from './profile/binding.js';
import { anonymousNote, noSessionError } from './no-session.js';
import { offerStepUp, scopesToAsk } from './login/step-up.js';

export type AuthMode = 'auto' | 'anonymous' | 'required';

export interface ApiRequest {
  method: string;
  /** Absolute; callers resolve paths against `client.baseUrl`. */
  url: URL;
  headers?: Record<string, string>;
  /** A fresh body for each attempt (a file is reopened for a retry). */
  body?: () => string | Uint8Array | Readable | undefined;
  /** false when the body cannot be sent twice (stdin): no retry, no replay after a 401. Default true. */
  replayable?: boolean;
  /** How many times to retry; default DEFAULT_RETRIES for idempotent methods, 0 for others. */
  retries?: number;
  /**
   * Overall deadline of the request, body included, across its retries and the waits between them (a Retry-After
   * that would end past it is not waited for); default DEFAULT_DEADLINE_MS.
   */
  timeoutMs?: number;
  /**
   * A shared pace (plat batch's governor): awaited before every attempt, and told of every 429/503 wait instead of
   * this request sleeping alone, so that one server's "slow down" pauses every request that shares the governor.
   */
  governor?: RequestGovernor;
  /** Ends this request (its retries, waits and body included) at once: a caller's cancellation (an MCP client's). */
  signal?: AbortSignal;
}

export interface RequestGovernor {
  /** Resolves when an attempt may go out (no pause in force, the rate allows it), or at once when `signal` aborts. */
  turn(signal?: AbortSignal): Promise<void>;
  /** The server asked for a pause of `ms` (answering `status`): every request waiting on turn() waits it out. */
  pause(ms: number, status?: number): void;
}

export interface ApiResponse extends HttpResponse {
  /** The token that went with the request, if any. */
  token?: TokenSource;
  /** The session's platform (its origin), when one is known: a response from elsewhere is not the session's to fix. */
  platformOrigin?: string;
  /**
   * A 401 to a request made without a session named the API's protected-resource document on its own origin:
   * remembered for the login that follows (discovery/resource-hint.ts), and named in the error that says to log in.
   */
  signIn?: { baseUrl: string; resourceMetadata: string };
}

export interface ApiClient {
  /** --base-url / PLAT_BASE_URL / the profile's. */
  readonly baseUrl: string | undefined;
  /** The invocation's profile (as it is after a step-up, when one signed in again). */
  readonly profile: Profile;
  send(request: ApiRequest, options?: SendOptions): Promise<ApiResponse>;
}

interface SendOptions {
  /**
   * Offer a step-up on a 403 insufficient_scope (a person at a terminal only: login/step-up.ts decides), and after
   * a yes send the request once more with the session the sign-in made. Only where a person waits on the answer
   * (plat call, its --jq and --paginate): plat batch, the library and plat mcp never pass it, so they never ask.
   * A request whose body cannot be sent again (stdin) is not offered one: it would go without its body.
   */
  stepUp?: {
    /** How the question names the request: "This call" (the default), "Page 3 of this list". */
    what?: string;
  };
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const DEFAULT_RETRIES = 2;
/** The longest Retry-After plat waits for; a server asking for more gets its answer returned instead. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** Every request ends: a server that trickles a byte a second cannot hold a script forever. */
const DEFAULT_DEADLINE_MS = 10 * 60_000;
/** Failures where the request most likely never reached the application: safe to repeat an idempotent one. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
/** The most of a 403 plat holds while it asks whether to step up. */
const STEP_UP_REFUSAL_BYTES = 1024 * 1024;

/**
 * A path resolved against the base URL (`/api/courses`, or `api/courses`), or an absolute http(s) URL as is, for
 * plat call, plat op and the library alike. `whatToDo` finishes the sentence when no platform is known.
 */
export function resolveApiUrl(target: string | URL, baseUrl: string | undefined, whatToDo: string): URL {
  if (target instanceof URL) return new URL(target.href);
  if (/^https?:\/\//i.test(target)) {
    try {
      return new URL(target);
    } catch {
      throw new UsageError(`"${target}" is not a valid URL.`);
    }
  }
  if (!baseUrl) throw new UsageError(`No platform to call: ${whatToDo}.`);
  return new URL(`${baseUrl}${target.startsWith('/') ? target : `/${target}`}`);
}

/** `binding`: the invocation's target, as the front door worked it out (it is not worked out again here). */
export async function openApiClient(ctx: Context, options: { auth: AuthMode; binding: Binding }): Promise<ApiClient> {
  let binding: Binding = options.binding;
  if (options.auth !== 'anonymous' && binding.kind === 'none') {
    // A session that ended on its own, or one that belongs to another platform, is never silently swapped for
    // anonymous access when a command needs it.
    if (options.auth === 'required' || binding.reason === 'ended') throw noSessionError(ctx, binding);
  }
  let source: TokenSource | undefined;
  let active: ActiveSession | undefined;
  /** The binding's tokens: at the start, and again after a step-up signed in anew. */
  const useBinding = () => {
    source = options.auth === 'anonymous' ? undefined : binding.kind === 'env' ? { kind: 'env', token: binding.token, profile: binding.profile, baseUrl: binding.baseUrl } : undefined;
    active = binding.kind === 'session' && options.auth !== 'anonymous' ? binding.active : undefined;
  };
  useBinding();
  const origin = binding.baseUrl ? new URL(binding.baseUrl).origin : undefined;
  const notes = new Set<string>();
  const noteOnce = (text: string) => {
    if (notes.has(text)) return;
    notes.add(text);
    ctx.io.note(text);
  };
  /** Token choices one at a time: requests sent in parallel (plat batch) share one refresh instead of racing. */
  let turn: Promise<unknown> = Promise.resolve();
  const tokenFor = async (url: URL, refused?: string): Promise<TokenSource | undefined> => {
    if (options.auth === 'anonymous') return undefined;
    if (url.origin !== origin) {
      if (binding.kind !== 'none') noteOnce(`${url.origin} is not the platform's origin: calling it without your token.`);
      return undefined;
    }
    if (binding.kind === 'none') {
      noteOnce(anonymousNote(ctx, binding));
      return undefined;
    }
    if (active) {
      const choose = async () => {
        const current = active!;
        // A forced refresh (after a 401) only while the refused token is still the current one: a request whose 401
        // came back after another already refreshed uses the new token instead of refreshing again.
        const fresh = await freshToken(ctx, current, refused !== undefined && refused === current.session.accessToken);
        active = fresh;
        source = fresh;
        return fresh;
      };
      const chosen = turn.then(choose);
      turn = chosen.catch(() => undefined);
      return chosen;
    }
    return source;
  };

  const send = async (request: ApiRequest, sendOptions: SendOptions = {}): Promise<ApiResponse> => {
    const method = request.method.toUpperCase();
    const replayable = request.replayable !== false;
    // One deadline for the whole request: the refresh, every attempt, the waits between them and a replay after 401.
    const deadline = ctx.now() + (request.timeoutMs ?? DEFAULT_DEADLINE_MS);
    let token = await tokenFor(request.url);
    const headers = headersToSend(request, request.url.origin === origin);
    let response = await sendWithRetries(ctx, { ...request, method, headers }, token, replayable, deadline);
    // RFC 9449 §9: a bound token's request the API refused for want of its nonce is sent once more with a proof
    // that carries it (sendWithRetries kept it); a second refusal is the answer, never a loop.
    if (response.status === 401 && isBound(token) && replayable && (await import('../oauth/dpop.js')).asksForDpopNonce(401, response.headers, request.url.origin)) {
      response.body.destroy();
      response = await sendWithRetries(ctx, { ...request, method, headers }, token, replayable, deadline);
    }
    if (response.status === 401 && token?.kind === 'session' && replayable && !dpopRefusal(response)) {
      const challenge = parseBearerChallenge(header(response, 'www-authenticate'));
      if (!challenge?.error || challenge.error === 'invalid_token') {
        response.body.destroy();
        token = await tokenFor(request.url, token.token);
        response = await sendWithRetries(ctx, { ...request, method, headers }, token, replayable, deadline);
      }
    }
    const result = response as ApiResponse;
    result.token = token;
    result.platformOrigin = origin;
    if (response.status === 401 && !token && binding.kind === 'none' && options.auth !== 'anonymous') {
      // The base URL the login would use: the platform's, or, for a URL given alone (no profile, no --base-url),
      // that URL itself (as `plat login --base-url <URL>` takes it).
      const baseUrl = binding.baseUrl ? (request.url.origin === origin ? binding.baseUrl : undefined) : baseUrlOf(request.url);
      if (baseUrl) result.signIn = await rememberChallenge(ctx, baseUrl, response);
    }
    if (sendOptions.stepUp && replayable && result.status === 403 && token?.kind === 'session') return stepUp(request, result, token, sendOptions.stepUp.what);
    return result;
  };

  /**
   * The one step-up path: asks (where step-up.ts says plat may, and only about scopes the session lacks), and on a
   * yes binds the session the sign-in made and sends the request once more, with a deadline of its own (the
   * sign-in took the person's time, not the server's). The token went only to the platform's origin, so a 403 from
   * anywhere else never gets here.
   */
  const stepUp = async (request: ApiRequest, refused: ApiResponse, token: TokenSource & { kind: 'session' }, what?: string): Promise<ApiResponse> => {
    const missing = scopesToAsk(ctx, parseBearerChallenge(header(refused, 'www-authenticate')), token.session.scopes);
    if (!missing) return refused;
    // The refusal is kept (a 403 is small; a hostile one is cut at 1 MiB) so that a "no" still has it to print.
    const { bytes } = await readBodyUpTo(refused.body as Readable, STEP_UP_REFUSAL_BYTES);
    const signedIn = await offerStepUp(ctx, binding.profile, missing, what);
    if (!signedIn) return { ...refused, body: Readable.from([bytes]) };
    binding = await bindSession(ctx, signedIn);
    useBinding();
    return send(request);
  };

  return {
    get baseUrl() {
      return binding.baseUrl;
    },
    get profile() {
      return binding.profile;
    },
    send,
  };
}

/**
 * The request's headers as they go: each name as the header rule compares it (http/header-rule.ts), so that no spelling
 * ("Authorization ", "HOST") slips past a check that normalised otherwise. The last line of defence: every way in
 * (plat call, op, batch, mcp, the library) refuses these names first, in its own words.
 */
function headersToSend(request: ApiRequest, towardPlatform: boolean): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const refused = refusedHeader(name, towardPlatform);
    if (refused) throw new UsageError(`${request.method.toUpperCase()} ${request.url.pathname} was not sent: ${refused}.`);
    const key = headerKey(name);
    headers[key] = Object.hasOwn(headers, key) ? `${headers[key]}, ${value}` : value;
  }
  return headers;
}

/** A URL called alone as the base URL a login takes (its query dropped); undefined where login would refuse it. */
function baseUrlOf(url: URL): string | undefined {
  try {
    return parseBaseUrl(`${url.origin}${url.pathname}`);
  } catch {
    return undefined;
  }
}

/**
 * RFC 9728 §5.1: the API's 401 names its protected-resource document. Only one on the API's own origin and not at
 * the well-known address is kept (a document elsewhere could name any authorization server); discovery still
 * checks that it is for this API.
 */
async function rememberChallenge(ctx: Context, baseUrl: string, response: HttpResponse): Promise<ApiResponse['signIn']> {
  const named = parseBearerChallenge(header(response, 'www-authenticate'))?.resourceMetadata;
  if (!named) return undefined;
  let address: URL;
  try {
    address = new URL(named, baseUrl);
  } catch {
    return undefined;
  }
  const base = new URL(baseUrl);
  // The exact origin (scheme, host and port): an http:// document for an https API, or one on another port of the
  // same host, is another party's, and could name any authorization server.
  if (address.origin !== base.origin) return undefined;
  // The well-known address (RFC 9728 §3.1) is where discovery looks anyway: nothing to remember, nothing to add.
  if (address.href === new URL(`/.well-known/oauth-protected-resource${base.pathname.replace(/\/+$/, '')}`, base).href) return undefined;
  await rememberResourceMetadata(ctx, baseUrl, address.href);
  return { baseUrl, resourceMetadata: address.href };
}

async function sendWithRetries(ctx: Context, request: ApiRequest, token: TokenSource | undefined, replayable: boolean, deadline: number): Promise<HttpResponse> {
  const http = await ctx.http();
  const idempotent = IDEMPOTENT_METHODS.has(request.method);
  const retries = replayable ? (request.retries ?? (idempotent ? DEFAULT_RETRIES : 0)) : 0;
  const what = () => `${request.method} ${request.url.pathname}`;
  // The same for every attempt (the HTTP client copies them): built once, not per attempt; but for a bound token's
  // DPoP proof, which is fresh for each (a new jti, the origin's latest nonce).
  const headers = { ...request.headers };
  const key = isBound(token) ? token.session.dpopKey : undefined;
  // Loaded only for a bound session: a bearer call never pays for the signing code.
  const dpop = key ? await import('../oauth/dpop.js') : undefined;
  if (token) headers.authorization = `${key ? 'DPoP' : 'Bearer'} ${token.token}`;
  for (let attempt = 0; ; attempt++) {
    let response: HttpResponse;
    await request.governor?.turn(request.signal);
    try {
      response = await http.request({
        method: request.method,
        url: request.url,
        headers: dpop && key ? { ...headers, dpop: dpop.dpopProof(key, { method: request.method, url: request.url, accessToken: token!.token, now: ctx.now() }) } : headers,
        body: request.body?.(),
        signal: request.signal,
        // Redirects are never followed: the response (3xx included) is the result, so no token follows one.
        timeoutMs: Math.max(1, deadline - ctx.now()),
      });
    } catch (error) {
      const reset = error instanceof NetworkError && RESET_CODES.has(error.code ?? '');
      const wait = backoff(attempt);
      if (idempotent && reset && attempt < retries && ctx.now() + wait < deadline) {
        ctx.io.note(`${what()}: the connection was reset; retrying in ${seconds(wait)} (${attempt + 1}/${retries}).`);
        await sleep(wait, waitSignal(ctx, request));
        continue;
      }
      throw error;
    }
    if (dpop) dpop.rememberDpopNonce(request.url.origin, response.headers['dpop-nonce']);
    const retryable = response.status === 429 || response.status === 503 || (idempotent && (response.status === 502 || response.status === 504));
    if (retryable && attempt < retries) {
      const wait = retryDelay(header(response, 'retry-after'), attempt, ctx.now());
      if (wait !== undefined && ctx.now() + wait >= deadline) {
        // --timeout bounds the request, waits included: the server's answer now rather than a wait past the deadline.
        ctx.io.note(`${what()}: HTTP ${response.status}; a retry in ${seconds(wait)} would end past the request's deadline (--timeout): not retrying.`);
      } else if (wait !== undefined) {
        response.body.destroy();
        if (request.governor) {
          // Everyone sharing the governor waits; turn() at the top of the loop is this request's wait.
          request.governor.pause(wait, response.status);
          continue;
        }
        ctx.io.note(`${what()}: HTTP ${response.status}; retrying in ${seconds(wait)} (${attempt + 1}/${retries}).`);
        await sleep(wait, waitSignal(ctx, request));
        continue;
      }
    }
    return response;
  }
}

/** What ends a wait between attempts: Ctrl-C, and the request's own signal when it has one. */
function waitSignal(ctx: Context, request: ApiRequest): AbortSignal {
  return request.signal ? AbortSignal.any([ctx.signal, request.signal]) : ctx.signal;
}

/** A session token bound to its DPoP key (RFC 9449): every use carries a proof signed with it. */
function isBound(token: TokenSource | undefined): token is TokenSource & { kind: 'session'; session: { dpopKey: NonNullable<StoredSession['dpopKey']> } } {
  return token?.kind === 'session' && token.session.tokenType === 'DPoP' && token.session.dpopKey !== undefined;
}

/**
 * A 401 about the DPoP proof rather than the token (use_dpop_nonce asked again, invalid_dpop_proof): a refresh
 * would not help, so none is made; response-error.ts says what it was.
 */
function dpopRefusal(response: HttpResponse): boolean {
  return /\bdpop\b[^]*error\s*=\s*"?(use_dpop_nonce|invalid_dpop_proof)/i.test(header(response, 'www-authenticate') ?? '');
}

export function header(response: HttpResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Retry-After as seconds or an HTTP date; undefined when the server asks for longer than MAX_RETRY_AFTER_MS. */
export function retryDelay(value: string | undefined, attempt: number, now: number): number | undefined {
  if (!value) return backoff(attempt);
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  if (!Number.isFinite(ms)) return backoff(attempt);
  return ms > MAX_RETRY_AFTER_MS ? undefined : Math.max(0, ms);
}

/** 0.5 s, 1 s, 2 s, … (capped at 8 s), each with up to 50 % random jitter so parallel scripts spread out. */
export function backoff(attempt: number, random = Math.random): number {
  const base = Math.min(8_000, 500 * 2 ** attempt);
  return Math.round(base + base * 0.5 * random());
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
