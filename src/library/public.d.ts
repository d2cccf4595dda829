/**
 * The public types of the Node library (`import { createClient } from 'plat-cli'`), written by hand: the build ships
 * this file as dist/library/index.d.ts, src/library/index.ts is checked against it by the compiler, and a test type-checks
 * a consumer against the packed package. Change it only together with the library contract of `plat help scripting`
 * (src/help/topics/scripting.md).
 */

export interface ClientOptions {
  /** The stored session to use: like --profile (default: PLAT_PROFILE, else the one `plat switch` chose, else "default"). */
  profile?: string;
  /**
   * The platform's origin: like --base-url (default: PLAT_BASE_URL, else the one the profile remembers). The token
   * goes only to the origin the session belongs to; another origin is called without it.
   */
  baseUrl?: string;
  /** Receives warnings plat would print on stderr (a keychain fallback, a note about an origin). Default: stderr. */
  onWarning?: (message: string) => void;
}

export interface TokenOptions {
  /** Seconds the token must still be valid for: refreshed first (under the lock) when it would expire sooner. */
  minTtl?: number;
}

export interface TokenInfo {
  accessToken: string;
  tokenType: string;
  /** null when the server did not say (and for PLAT_TOKEN, whose expiry plat cannot know). */
  expiresAt: Date | null;
  /** Granted scopes; null for PLAT_TOKEN. */
  scopes: string[] | null;
  /** The profile whose session this is; null for PLAT_TOKEN. */
  profile: string | null;
  /** The origin the token is for. */
  baseUrl: string | null;
}

export interface PaginateOptions {
  /** Stop after this many pages / items. */
  maxPages?: number;
  maxItems?: number;
  /** Where the items are when detection cannot tell (a dotted path into each page, as `call --items`). */
  items?: string;
  /** Where the next page's URL or cursor is (a dotted path, as `call --next`). */
  next?: string;
}

/** A value of BatchRequest.query. */
export type QueryValue = string | number | boolean | null | Array<string | number | boolean | null> | { [member: string]: QueryValue };

/** One request of client.batch(): `plat batch`'s request line, raw or an operation of the platform's API. */
export type BatchRequest = BatchRawRequest | BatchOpRequest;

/** `plat batch`'s raw request line. */
export interface BatchRawRequest {
  /** Reported back in its result; default its 1-based position. */
  id?: string | number;
  method: string;
  /** Resolved against baseUrl, as client.fetch's path. */
  path: string;
  /**
   * Query parameters: a list repeats its name (`ids: [1, 2]` is `ids=1&ids=2`; name it `'ids[]'` for `ids[]=1&ids[]=2`),
   * an object's members are `name[member]` (`filter: { year: 2 }` is `filter[year]=2`); anything else is refused.
   */
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  /** Sent as JSON (a string with a non-JSON content-type header: as it is). */
  body?: unknown;
}

/**
 * `plat batch`'s op line: an operation of the platform's `/openapi.json` (read on the first one, as `plat op` reads
 * it), its parameters and body checked against it as `plat op` checks them.
 */
export interface BatchOpRequest {
  /** Reported back in its result; default its 1-based position. */
  id?: string | number;
  /** The operationId (`plat op` lists them). */
  op: string;
  /** Path, query and header parameters by name; a list repeats a query parameter. */
  params?: Record<string, unknown>;
  /** Sent as JSON (a string is the body's text, for an operation that takes another content type). */
  body?: unknown;
}

export interface BatchOptions {
  /** Requests in flight at once; default 4. */
  concurrency?: number;
  /** At most this many requests a second. */
  ratePerSecond?: number;
  /** Yield results in input order (default: as they complete). */
  ordered?: boolean;
  /** Stop taking requests at the first failure. */
  failFast?: boolean;
  /** Aborting stops the batch: no more requests start, those in flight end. */
  signal?: AbortSignal;
}

/** `plat batch`'s result line. */
export interface BatchResult {
  id: string | number;
  /** 1-based position of the request. */
  line: number;
  /** null when no response came (a network failure). */
  status: number | null;
  /** A 2xx status. */
  ok: boolean;
  /** The response body: parsed JSON, else text. */
  body?: unknown;
  error?: string;
  /** The request was sent but its outcome is not known (the run was interrupted while it was in flight). */
  unknown?: boolean;
}

export interface ProxyOptions {
  /** The port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Also forward methods that change data (POST, PUT, PATCH, DELETE); default: reading only (405 otherwise). */
  allowWrite?: boolean;
}

/** A running `plat proxy` in this program. */
export interface LocalProxy {
  /** `http://127.0.0.1:PORT/KEY/`: the base URL to give an HTTP client; it holds the key the proxy asks for. */
  readonly url: string;
  /** Stops taking connections; resolves once the last one is closed (requests in flight get two seconds). */
  close(): Promise<void>;
}

export interface PlatClient {
  /** The profile this client uses. */
  readonly profile: string;
  /**
   * A request as with the global fetch, resolved against baseUrl, with the session's token attached only on the
   * session's origin. A token about to expire is refreshed first; a 401 invalid_token is refreshed once and retried
   * once. Resolves to a standard Response for every status but these, which reject: a 401 that a refresh did not
   * cure (AuthError), 403 insufficient_scope (ScopeError, naming the scope). Redirects are not followed.
   */
  fetch(path: string | URL, init?: RequestInit): Promise<Response>;
  /** Every item of every page of a list endpoint, as `plat call --paginate` finds them. */
  paginate<T = unknown>(path: string, options?: PaginateOptions): AsyncIterableIterator<T>;
  /** A valid access token and what plat knows about it. */
  token(options?: TokenOptions): Promise<TokenInfo>;
  /**
   * Many requests over this client's one session, `concurrency` at a time (one refresh for all of them); a 429 or
   * 503 with Retry-After pauses every one. Yields a result per request as each completes; rejects with an AuthError
   * (after the results so far) when the session ends. The same engine as `plat batch`.
   */
  batch(requests: Iterable<BatchRequest> | AsyncIterable<BatchRequest>, options?: BatchOptions): AsyncIterableIterator<BatchResult>;
  /**
   * `plat proxy`'s server on 127.0.0.1: requests to `url` go to the platform with this client's session's token
   * (which the caller of `url` never sees), refreshed as for fetch; answered 401 naming `plat login` while there is
   * no session. For test suites and SDKs that take a base URL.
   */
  proxy(options?: ProxyOptions): Promise<LocalProxy>;
}

/**
 * A client over the session `plat login` stored, read on first use. Never opens a browser: without a session its
 * calls reject with an AuthError that says which `plat login` to run. Reads the same environment as the command
 * (PLAT_PROFILE, PLAT_BASE_URL, PLAT_TOKEN, PLAT_CONFIG_DIR, PLAT_TOKEN_STORE, proxies). Throws a UsageError at once
 * for an invalid profile name or base URL.
 */
export function createClient(options?: ClientOptions): PlatClient;

/** Every failure is a PlatError: `message` says what happened and what to do; `exitCode` is the CLI's for it. */
export class PlatError extends Error {
  readonly exitCode: number;
}
/** A bad argument (exit code 2). */
export class UsageError extends PlatError {}
/** The server could not be reached (exit code 3); `code` is the system's (ECONNREFUSED, …). */
export class NetworkError extends PlatError {
  readonly code?: string;
}
/** Not logged in, or the session was rejected (exit code 4): the message names the `plat login` to run. */
export class AuthError extends PlatError {}
/** The token lacks a scope (exit code 5): the message names it and the `plat login --add-scope` that adds it. */
export class ScopeError extends PlatError {}
