/**
 * The headers the user gave (`-H`) for one origin, on their way to a page on another (a next link that points
 * elsewhere). As curl does on a redirect to another host, whatever may carry a credential stays behind: not only
 * Authorization and Cookie, but any header plat cannot tell is harmless (`X-Api-Key`, `X-Session`, a vendor's
 * token header), so only the few that describe the request itself go on.
 */

/** Headers that say what the request wants and nothing about who makes it. */
const HARMLESS = new Set([
  'accept',
  'accept-language',
  'accept-encoding',
  'cache-control',
  'content-type',
  'pragma',
  'prefer',
  'user-agent',
]);

export interface SplitHeaders {
  /** What goes to the other origin. */
  kept: Record<string, string>;
  /** The names held back, as the user wrote them. */
  dropped: string[];
}

export function headersForOtherOrigin(headers: Record<string, string> | undefined): SplitHeaders {
  const kept: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    const key = name.toLowerCase();
    // Every conditional header (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range), as the
    // contract lists them: they say which version is wanted, nothing of who asks.
    if (HARMLESS.has(key) || key.startsWith('if-')) kept[name] = value;
    else dropped.push(name);
  }
  return { kept, dropped };
}
