/**
 * Redaction for anything plat prints about HTTP traffic (--verbose) and for error messages that quote a server.
 * Secrets are replaced by their name, so a trace stays readable but is safe to paste into an issue.
 */
const SECRET_PARAMS = [
  'code',
  'code_verifier',
  'device_code',
  'refresh_token',
  'access_token',
  'id_token',
  'client_secret',
  'token',
  'assertion',
  'client_assertion',
  'registration_access_token',
  'password',
];
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'dpop']);
export const REDACTED = '[redacted]';

/**
 * The secrets this process holds (the session's tokens, a login's code and verifier, a client secret). Whatever
 * plat writes to stderr is scrubbed of them, so that a server which quotes a token back in an error description
 * cannot make plat print it. Short values are not secrets worth the false matches.
 */
const known = new Set<string>();

export function rememberSecrets(...values: Array<string | null | undefined>): void {
  for (const value of values) if (typeof value === 'string' && value.length >= 8) known.add(value);
}

/** `text` with every known secret replaced by [redacted]. */
export function scrubKnownSecrets(text: string): string {
  let out = text;
  for (const secret of known) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  return out;
}

function isSecretParam(name: string): boolean {
  return SECRET_PARAMS.includes(name.toLowerCase());
}

export function redactUrl(input: string | URL): string {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return String(input);
  }
  if (url.username || url.password) {
    url.username = url.username ? REDACTED : '';
    url.password = url.password ? REDACTED : '';
  }
  for (const key of [...url.searchParams.keys()]) {
    if (isSecretParam(key)) url.searchParams.set(key, REDACTED);
  }
  // Implicit-style responses carry tokens in the fragment (#access_token=…).
  if (url.hash.includes('=')) url.hash = redactForm(url.hash.slice(1));
  return url.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

export function redactHeaderValue(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (!SECRET_HEADERS.has(lower)) return value;
  if (lower === 'authorization' || lower === 'proxy-authorization') {
    const scheme = value.split(' ', 1)[0];
    return scheme && scheme !== value ? `${scheme} ${REDACTED}` : REDACTED;
  }
  return REDACTED;
}

export function redactForm(body: string): string {
  const params = new URLSearchParams(body);
  for (const key of [...params.keys()]) {
    if (isSecretParam(key)) params.set(key, REDACTED);
  }
  return params.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}

export function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, isSecretParam(k) ? REDACTED : redactJson(v)]),
    );
  }
  return value;
}

/** Redacts a body by its content type; anything that is neither form nor JSON is summarised by size only. */
export function redactBody(body: string, contentType: string | null | undefined): string {
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('application/x-www-form-urlencoded')) return redactForm(body);
  if (type.includes('json')) {
    try {
      return JSON.stringify(redactJson(JSON.parse(body)));
    } catch {
      return `<${Buffer.byteLength(body)} bytes of unparseable JSON>`;
    }
  }
  return `<${Buffer.byteLength(body)} bytes>`;
}
