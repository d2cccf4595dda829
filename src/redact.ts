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
 * The secrets one invocation holds (the session's tokens, a login's code and verifier, a client secret), one set per
 * Context (src/context.ts): whatever plat writes to stderr, and an error the library throws, is scrubbed of them, so
 * that a server which quotes a token back in an error description cannot make plat repeat it. Short values are not
 * secrets worth the false matches.
 *
 * Bounded, least recently remembered first out: a library client (or a long `plat batch`) lives through any number
 * of refreshes, and each adds new tokens. Forgetting a token the moment its refresh replaces it is not safe: a
 * response to a request still in flight with the old one (batch runs up to 256 at a time) may quote it after the
 * refresh. So the replaced tokens stay for a while, and the current ones do not age out: every load of the session
 * (session/access.ts) remembers its tokens again, which makes them the most recent. CAPACITY holds many generations
 * of a session (each up to four values: access, refresh and ID token, client secret), more than a request outlives.
 */
export class KnownSecrets {
  static readonly CAPACITY = 64;
  /** Insertion order is recency: remembering a value again moves it to the end. */
  private readonly values = new Set<string>();

  remember(...values: Array<string | null | undefined>): void {
    for (const value of values) {
      if (typeof value !== 'string' || value.length < 8) continue;
      this.values.delete(value);
      this.values.add(value);
    }
    for (const oldest of this.values) {
      if (this.values.size <= KnownSecrets.CAPACITY) break;
      this.values.delete(oldest);
    }
  }

  /** `text` with every known secret replaced by [redacted]. */
  scrub(text: string): string {
    let out = text;
    for (const secret of this.values) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    return out;
  }

  /** How many values are held (at most CAPACITY). */
  get size(): number {
    return this.values.size;
  }
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
