/**
 * The filter in front of the forwarding (kubectl proxy's shape): who may use the proxy and for what, decided from
 * the request line and headers alone, before anything is sent anywhere. Only the proxy's caller can use it:
 * - over TCP, the path starts with the per-start key (`/KEY/…`), which only the one who started the proxy was told;
 *   a missing or wrong key (another proxy's included) is a 403;
 * - the Host names the proxy's own loopback address: a page on a DNS-rebound name (evil.example → 127.0.0.1) sends
 *   its own name as Host;
 * - a request with an Origin comes from a web page (browsers send it on every cross-origin and every non-GET
 *   request): refused, and no CORS header is ever sent, so no preflight can succeed either;
 * - an absolute-form URL naming another host, `*`, and CONNECT (handled where the server emits it) are refused: it
 *   forwards to the platform, never anywhere a client names;
 * - without --allow-write, only reading methods; TRACE never, since the answer echoes the token.
 * A doubled slash after the key (`${PLAT_PROXY_URL}/api/x`) is the same path as a single one.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** A method that echoes the request back (its Authorization, the session's token, included): refused, --allow-write or not. */
const NEVER_FORWARDED = new Set(['TRACE']);

export interface GateOptions {
  /** Over TCP, where the key and the Host are the gate: nothing passes until both are known. */
  tcp: boolean;
  /** The per-start key; undefined on a unix socket, whose 0600 mode is the gate. */
  key: string | undefined;
  /** Host header values that name the proxy itself (`127.0.0.1:PORT`, `localhost:PORT`); undefined on a socket. */
  hosts: ReadonlySet<string> | undefined;
  allowWrite: boolean;
}

export type Verdict =
  | { ok: true; path: string }
  | { ok: false; status: number; error: string; message: string; allow?: string };

const refuse = (status: number, error: string, message: string): Verdict => ({ ok: false, status, error, message });

/** Headers that make a reading method a write on platforms that honour them. */
const METHOD_OVERRIDES = ['x-http-method-override', 'x-http-method', 'x-method-override'];

export function judge(request: IncomingMessage, options: GateOptions): Verdict {
  if (options.tcp && (options.key === undefined || options.hosts === undefined)) {
    return refuse(503, 'not_ready', 'The proxy is not listening yet: nothing was forwarded.');
  }
  const host = request.headers.host?.toLowerCase();
  if (options.hosts && (!host || !options.hosts.has(host))) {
    return refuse(403, 'foreign_host', 'The Host header does not name this proxy (127.0.0.1 or localhost and its port): nothing was forwarded.');
  }
  if (request.headers.origin !== undefined) {
    return refuse(403, 'origin_refused', 'Requests from web pages (with an Origin header) are refused: the proxy serves local programs only. Nothing was forwarded.');
  }
  const target = ownTarget(request.url ?? '', options.hosts);
  if (target === undefined) {
    return refuse(403, 'foreign_target', 'The proxy forwards only to its platform: use a path (/KEY/api/...), not a URL naming another host. Nothing was forwarded.');
  }
  let path = target;
  if (options.key !== undefined) {
    path = afterKey(target, options.key) as string;
    if (path === undefined) return refuse(403, 'wrong_key', withoutKey(target, options.key.length));
  }
  // `${PLAT_PROXY_URL}/api/x` (the URL ends with a slash): the doubled slash is the same path as a single one.
  path = path.replace(/^\/{2,}/, '/');
  const method = request.method ?? 'GET';
  if (NEVER_FORWARDED.has(method)) {
    return {
      ...(refuse(405, 'trace_refused', `plat proxy never forwards ${method}: the platform would send the request back as it received it, the session's token included. Nothing was forwarded.`) as Extract<Verdict, { ok: false }>),
      allow: options.allowWrite ? 'GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE' : [...READ_METHODS].join(', '),
    };
  }
  const override = options.allowWrite ? undefined : METHOD_OVERRIDES.find((name) => request.headers[name] !== undefined);
  if (override) {
    return {
      ...(refuse(405, 'read_only', `${override} asks the platform to treat ${method} as another method, and this proxy is read-only: start it with plat proxy --allow-write to send writes. Nothing was forwarded.`) as Extract<Verdict, { ok: false }>),
      allow: [...READ_METHODS].join(', '),
    };
  }
  if (!options.allowWrite && !READ_METHODS.has(method)) {
    return {
      ...(refuse(405, 'read_only', `${method} changes data, and this proxy is read-only: start it with plat proxy --allow-write to send writes. Nothing was forwarded.`) as Extract<Verdict, { ok: false }>),
      allow: [...READ_METHODS].join(', '),
    };
  }
  return { ok: true, path };
}

/** The origin-form target of the request (`/…`), taken out of an absolute-form URL that names the proxy itself. */
function ownTarget(url: string, hosts: ReadonlySet<string> | undefined): string | undefined {
  if (url.startsWith('/')) return url;
  if (!/^http:\/\//i.test(url)) return undefined; // `*`, authority-form, another scheme
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.username || parsed.password) return undefined;
  if (!hosts?.has(parsed.host.toLowerCase())) return undefined;
  return `${parsed.pathname}${parsed.search}`;
}

/**
 * Why a request lacks the key, in words that say how it went missing and how to keep it. Never the key itself: the
 * one asking did not have it. A first segment of the key's length is a wrong key (another proxy's, an older
 * start's); anything else is a path that lost it, mostly an absolute path (`/api/...`) resolved against the URL.
 */
function withoutKey(target: string, keyLength: number): string {
  const first = /^\/([^/?]*)/.exec(target)?.[1] ?? '';
  if (first.length === keyLength && /^[A-Za-z0-9_-]+$/.test(first)) {
    return "The request's key is not this proxy's (another proxy's, or one from an earlier start): use the PLAT_PROXY_URL this proxy printed. Nothing was forwarded.";
  }
  return (
    "The request's path does not start with this proxy's key. The key is the first path segment of PLAT_PROXY_URL " +
    '(http://127.0.0.1:PORT/KEY/), and a path starting with a slash, resolved against that URL (urljoin(url, "/api/x"), ' +
    'new URL("/api/x", url), a base URL with an absolute path), replaces it. Join relative paths instead: ' +
    'urljoin(url, "api/x"), new URL("api/x", url), or a string join, "${PLAT_PROXY_URL%/}/api/x"; or start the proxy ' +
    'with --socket, which needs no key. Nothing was forwarded.'
  );
}

/** The rest of the target after `/KEY` (`/` when nothing follows), or undefined when it does not start with the key. */
function afterKey(target: string, key: string): string | undefined {
  const end = target.slice(1).search(/[/?]/);
  const given = end === -1 ? target.slice(1) : target.slice(1, end + 1);
  if (!sameSecret(given, key)) return undefined;
  const rest = target.slice(1 + given.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The key's bytes, made once per key rather than once per request. */
const keyBytes = new Map<string, Buffer>();

/** A comparison whose time does not tell how much of a guessed key was right (only whether its length was). */
function sameSecret(given: string, key: string): boolean {
  if (given.length !== key.length) return false;
  let b = keyBytes.get(key);
  if (!b) keyBytes.set(key, (b = Buffer.from(key)));
  const a = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
