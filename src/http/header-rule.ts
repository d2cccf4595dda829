/**
 * The one rule for header names that come from input — `-H`, an API description's header parameters, a batch
 * line's headers, an MCP tool's arguments, the library's `init.headers` — and the last check the sender makes
 * (session/request.ts). Every place compares names the same way (headerKey: trimmed, lower-case), so a check and
 * the sender can never disagree about what a name is ("Authorization " with a trailing space is Authorization).
 *
 * Which of the Fetch standard's forbidden request headers are refused, and why (a CLI is not a browser: the person
 * is the origin, so the browser-privacy ones are theirs to send):
 * - Host: picks the virtual host, so behind a front end that routes by Host the token reaches another tenant.
 * - Connection, Keep-Alive, Upgrade, TE, Trailer, Transfer-Encoding, Content-Length, Expect: the message's framing
 *   and the connection's fate, which plat's HTTP client sets; a wrong one desynchronises the request or smuggles a
 *   second one.
 * - Proxy-* (Proxy-Authorization, Proxy-Connection): for a proxy on the way, not for the platform.
 * - Sec-*: a browser's word about the page that made the request; a program claiming it lies to the server.
 * - Set-Cookie: a response header; in a request it only confuses what reads it.
 * - Authorization, Cookie, Cookie2 toward the platform: the session's credential is plat's to send, and another one
 *   given beside it would let input choose whose request this is. Toward any other origin they are the person's.
 * Kept, though the Fetch standard forbids them to pages: Accept-Charset, Accept-Encoding (the response is then
 * passed on as it comes), Access-Control-Request-*, Date, DNT, Origin, Referer, Via — none changes where the request
 * goes, how it is framed or whose it is.
 */

/** A header name as every check and the sender compare it. */
export const headerKey = (name: string): string => name.trim().toLowerCase();

const FRAMING = new Set(['host', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'transfer-encoding', 'content-length', 'expect']);
const CREDENTIALS = new Set(['authorization', 'cookie', 'cookie2']);

/**
 * Why a header of this name is never taken from input, or undefined when it may be. `towardPlatform`: the request
 * goes to the session's platform (its origin), where the session's own credential is the only one.
 */
export function refusedHeader(name: string, towardPlatform: boolean): string | undefined {
  const key = headerKey(name);
  if (key === 'host') return 'Host chooses which site on the server gets the request (and the token); plat sets it from the URL';
  if (key === 'set-cookie') return "Set-Cookie is a response header, never a request's";
  if (FRAMING.has(key)) return `plat's HTTP client sets ${key} itself: from input it could change how the request is framed`;
  if (key.startsWith('proxy-')) return `${key} is for a proxy on the way, not for the server; set HTTPS_PROXY with its credentials instead`;
  if (key.startsWith('sec-')) return `${key} is a browser's own header`;
  if (towardPlatform && CREDENTIALS.has(key)) {
    const instead = key === 'authorization' ? ' (to call it with another token, set PLAT_TOKEN)' : '';
    return `plat sends the session's own credential to the platform; ${key} is never taken from input there${instead}`;
  }
  return undefined;
}
