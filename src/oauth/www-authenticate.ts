/**
 * The Bearer challenge of a protected resource (RFC 6750 §3, RFC 9728 §5.1): error, scope, resource_metadata.
 * A small parser for the one scheme plat acts on; other schemes are ignored.
 */
export interface BearerChallenge {
  error?: string;
  errorDescription?: string;
  scope?: string;
  resourceMetadata?: string;
}

export function parseBearerChallenge(header: string | null | undefined): BearerChallenge | undefined {
  if (!header) return undefined;
  const match = /(?:^|,)\s*Bearer(?:\s+|$)/i.exec(header);
  if (!match) return undefined;
  const rest = header.slice(match.index + match[0].length);
  const params: Record<string, string> = {};
  const re = /\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*(,|$)/y;
  let m: RegExpExecArray | null;
  while ((m = re.exec(rest))) {
    // Unescaped only where there is an escape: a regular expression run twice is compiled to machine code.
    params[m[1]!.toLowerCase()] = m[2] !== undefined ? (m[2].includes('\\') ? m[2].replace(/\\(.)/g, '$1') : m[2]) : (m[3] ?? '');
    if (m[4] === '') break;
    // stop at the next scheme: "..., Basic realm=x"
    if (/^\s*[A-Za-z0-9_-]+\s+[A-Za-z0-9_-]+=/.test(rest.slice(re.lastIndex))) break;
  }
  return {
    error: params.error,
    errorDescription: params.error_description,
    scope: params.scope,
    resourceMetadata: params.resource_metadata,
  };
}
