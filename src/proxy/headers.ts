/**
 * Which headers cross the proxy, each way. A proxy is two connections, so the hop-by-hop headers (RFC 9110 §7.6.1:
 * Connection and every header it names, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, the Proxy-* family,
 * and Host, which the platform's own URL sets) belong to one of them and are never passed on. Beyond those:
 * - to the platform: the client's own Authorization is dropped (the session's token is the one that goes), and so
 *   are Cookie and Origin (the proxy grants no browser anything; Origin is refused before this anyway);
 * - to the client: Set-Cookie and every Access-Control-* header are dropped, so a platform (or anyone answering in
 *   its name) cannot set a cookie for 127.0.0.1, which every local service shares, or open the proxy to a web page;
 *   and so is any header that carries the token back (a body is masked of the session's secrets: scrub.ts);
 * - Accept-Encoding, to the platform, names only codings the proxy can decode (encoding.ts), and Range and
 *   If-Range are dropped, so the masker always reads a whole answer.
 */

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'http2-settings']);
import { refusedHeader } from '../http/header-rule.js';
import { acceptEncodingUpstream } from './encoding.js';

// Range and If-Range: a platform that reflects the request and honours ranges would hand a token over a few bytes
// per part, each too short to be seen as one; the proxy asks for whole answers (a client's range gets a 200).
const NEVER_UPSTREAM = new Set(['origin', 'range', 'if-range']);
const NEVER_DOWNSTREAM = new Set(['set-cookie', 'set-cookie2']);

/** What the proxy dropped that a person reading the access log should know of. */
export interface Dropped {
  authorization?: boolean;
  cookies?: boolean;
  cors?: boolean;
  /** A response header that carried the session's token back (a platform that echoes what it was sent). */
  echoedToken?: boolean;
}

/** The header names the Connection header lists: hop-by-hop too, whatever they are called. */
function connectionNames(raw: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // The length first: this runs twice per request over every header, and few are ten letters long.
    if (raw[i]!.length !== 10 || raw[i]!.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.split(',')) names.add(token.trim().toLowerCase());
  }
  return names;
}

const hopByHop = (name: string, named: Set<string>) => HOP_BY_HOP.has(name) || name.startsWith('proxy-') || named.has(name);

/** The client's headers to send to the platform (lower-case names, repeats joined as HTTP joins them). */
export function upstreamHeaders(raw: readonly string[], dropped: Dropped): Record<string, string> {
  const named = connectionNames(raw);
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (hopByHop(name, named) || NEVER_UPSTREAM.has(name)) continue;
    if (refusedHeader(name, true)) {
      if (name === 'authorization') dropped.authorization = true;
      continue;
    }
    const value = raw[i + 1]!;
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  headers['accept-encoding'] = acceptEncodingUpstream(headers['accept-encoding']);
  return headers;
}

/**
 * The platform's response headers to pass back, as a flat [name, value, …] list in the order received; a header
 * whose value holds a secret of the session in any spelling (`holdsSecret`: the token raw, percent-encoded in a
 * Location, JSON-escaped, or an older token a refresh replaced) is dropped, so an echo never hands it to the client.
 */
export function downstreamHeaders(raw: readonly string[], dropped: Dropped, holdsSecret: (value: string) => boolean): string[] {
  const named = connectionNames(raw);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (hopByHop(name, named)) continue;
    if (NEVER_DOWNSTREAM.has(name)) {
      dropped.cookies = true;
      continue;
    }
    if (name.startsWith('access-control-')) {
      dropped.cors = true;
      continue;
    }
    if (holdsSecret(raw[i + 1]!)) {
      dropped.echoedToken = true;
      continue;
    }
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}
