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
 * (session/tokens/access.ts) remembers its tokens again, which makes them the most recent. CAPACITY holds many generations
 * of a session (each up to four values: access, refresh and ID token, client secret), more than a request outlives.
 */
export class KnownSecrets {
  static readonly CAPACITY = 64;
  /** Insertion order is recency: remembering a value again moves it to the end. */
  private readonly values = new Set<string>();

  private changes = 0;

  remember(...values: Array<string | null | undefined>): void {
    for (const value of values) {
      if (typeof value !== 'string' || value.length < 8) continue;
      if (!this.values.delete(value)) this.changes++;
      this.values.add(value);
    }
    for (const oldest of this.values) {
      if (this.values.size <= KnownSecrets.CAPACITY) break;
      this.values.delete(oldest);
    }
  }

  /** Changes whenever a value is added (and so whenever one is dropped): what a reader that caches the set keys on. */
  get version(): number {
    return this.changes;
  }

  /**
   * `text` with every known secret replaced by [redacted], in each form it takes in text a server wrote: raw,
   * JSON-escaped (`\u0041`, `\/` as PHP writes a slash, any mix of escaped and plain characters) and
   * percent-encoded (`%41`, either case), so that an API which echoes a token in its JSON or a URL cannot make plat
   * hand it on. Text with neither a backslash nor a percent sign can hold the raw form only: the cheap way.
   */
  scrub(text: string): string {
    let out = text;
    const encoded = out.includes('\\') || out.includes('%');
    for (const secret of this.values) {
      if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
      if (encoded) out = out.replace(encodedForms(secret), REDACTED);
    }
    return out.includes('…') ? this.scrubCutShort(out) : out;
  }

  /**
   * The start of a secret that a text cut short ends with (sanitize() cuts a server's text at a length and adds
   * `…`): where a message was cut before it was scrubbed, the part of a token before the cut is still a secret's
   * worth of characters. Eight or more characters before a `…` that begin a known secret are redacted.
   */
  private scrubCutShort(text: string): string {
    return text.replace(/(\S{8,})…/g, (whole, before: string) => {
      for (const secret of this.values) {
        for (let k = Math.min(secret.length, before.length); k >= 8; k--) {
          if (before.endsWith(secret.slice(0, k))) return `${before.slice(0, before.length - k)}${REDACTED}…`;
        }
      }
      return whole;
    });
  }

  /**
   * A parsed value (a JSON response) with every string in it scrubbed, keys too: a copy, the original untouched
   * (or the value itself when it holds no secret). Iterative, so a value nested deeper than the stack is as safe
   * as a flat one.
   */
  scrubValue(value: unknown): unknown {
    // The quick way for the usual value, with no secret in it: a JSON text without a backslash holds every string
    // and key as it is, so one that a text scrub leaves alone holds no secret. A batch of thousands of results is
    // one pass each instead of a walk of every string. (With a backslash, a string's own "\/" is "\\/" in the
    // text, which spells nothing scrub() reads: the walk then scrubs each string as it is.)
    try {
      const text = JSON.stringify(value);
      if (text === undefined || (!text.includes('\\') && this.scrub(text) === text)) return value;
    } catch {
      // too deep for JSON.stringify's stack: walk it
    }
    const root: { value: unknown } = { value };
    const work: Array<[Record<string, unknown> | unknown[], string | number]> = [[root as Record<string, unknown>, 'value']];
    while (work.length > 0) {
      const [parent, key] = work.pop()!;
      const node = (parent as Record<string | number, unknown>)[key];
      if (typeof node === 'string') {
        (parent as Record<string | number, unknown>)[key] = this.scrub(node);
      } else if (Array.isArray(node)) {
        const copy = [...node];
        (parent as Record<string | number, unknown>)[key] = copy;
        for (let i = 0; i < copy.length; i++) work.push([copy, i]);
      } else if (node !== null && typeof node === 'object') {
        const copy: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(node)) copy[this.scrub(k)] = v;
        (parent as Record<string | number, unknown>)[key] = copy;
        for (const k of Object.keys(copy)) work.push([copy, k]);
      }
    }
    return root.value;
  }

  /** The values held, for a scrubber of bytes (plat proxy's answers: proxy/scrub.ts) that spells them itself. */
  list(): string[] {
    return [...this.values];
  }

  /** How many values are held (at most CAPACITY). */
  get size(): number {
    return this.values.size;
  }
}

const FORMS = new Map<string, RegExp>();

/** One pattern for every encoded spelling of `secret`: each character plain, `\uXXXX`, `%XX`, or (a slash) `\/`. */
function encodedForms(secret: string): RegExp {
  let pattern = FORMS.get(secret);
  if (!pattern) {
    const parts = [...secret].map((char) => {
      const code = char.codePointAt(0)!;
      const alternatives = [char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')];
      if (code <= 0xffff) alternatives.push(`\\\\u${hex(code, 4)}`);
      if (code < 0x80) alternatives.push(`%${hex(code, 2)}`);
      // JSON's short escapes: \/ (PHP escapes every slash), \" and \\ (a token may hold either: RFC 6749's VSCHAR).
      if (char === '/' || char === '"') alternatives.push(`\\\\\\${char}`);
      if (char === '\\') alternatives.push('\\\\\\\\');
      return `(?:${alternatives.join('|')})`;
    });
    pattern = new RegExp(parts.join(''), 'g');
    // Bounded as the set is: a long-lived library client sees many generations of tokens.
    if (FORMS.size >= KnownSecrets.CAPACITY * 2) FORMS.delete(FORMS.keys().next().value!);
    FORMS.set(secret, pattern);
  }
  pattern.lastIndex = 0;
  return pattern;
}

/** `code` in hex digits, each letter in either case (`%2f` and `%2F` are one character). */
function hex(code: number, width: number): string {
  return [...code.toString(16).padStart(width, '0')].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join('');
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
