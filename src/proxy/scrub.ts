/**
 * The session's secrets masked out of an answer's bytes as they stream through the proxy: every spelling that
 * KnownSecrets.scrub (redact.ts) reads in text — the secret raw, each character of it `\uXXXX`, `%XX` (either case),
 * or `\/`, `\"`, `\\` as JSON writes them, in any mix — is overwritten with as many mask bytes, so the body keeps its
 * length (a Content-Length or Content-Range stays true) and a reflecting endpoint hands the client nothing usable.
 *
 * Streamed: nothing is held but the last (longest spelling − 1) bytes of what came, so a spelling split across two
 * chunks (a platform writing a few bytes at a time) is seen whole. Byte work only, no string per chunk: the raw form
 * is one Buffer.indexOf per secret, and the escaped forms are looked for only where a `\` or `%` is (binary data has
 * few, and most are no escape of a character the secrets hold).
 */
import { Transform, type TransformCallback } from 'node:stream';

const BACKSLASH = 0x5c;
const EMPTY = Buffer.alloc(0);
const PERCENT = 0x25;

interface Secret {
  text: string;
  raw: Buffer;
  /** The byte every occurrence is overwritten with: one the secret does not hold, so a mask never matches again. */
  mask: number;
  /** For each character code, the indexes where it stands in the secret (an escape at p may spell any of them). */
  at: Map<number, number[]>;
}

/** What scrubs one answer: made from the session's secrets as they are when its headers come. */
export class SecretMasker {
  private readonly secrets: Secret[];
  /** Bytes held back between chunks: one less than the longest spelling (every character as `\uXXXX`). */
  readonly hold: number;
  /**
   * The first two bytes of every escape that spells a character some secret holds (`\u`, `%4`…): searched for
   * natively, so that binary data, with a `\` or `%` every 128 bytes, costs a few searches per chunk, not a call
   * per byte found.
   */
  private readonly escapeNeedles: Buffer[];
  /** The bytes a spelling can start with: each secret's first, `\` and `%`. */
  private readonly startBytes: number[];
  /** The same, as a table by byte value. */
  private readonly startable = new Uint8Array(256);

  constructor(values: Iterable<string>) {
    this.secrets = [];
    let longest = 0;
    const codes = new Set<number>();
    for (const text of values) {
      if (!/^[\x20-\x7e]+$/.test(text)) {
        // Tokens are VSCHAR (RFC 6749 A): printable ASCII. Anything else is kept as its raw UTF-8 bytes only.
        this.secrets.push({ text, raw: Buffer.from(text), mask: 0x2a, at: new Map() });
        longest = Math.max(longest, Buffer.byteLength(text));
        continue;
      }
      const at = new Map<number, number[]>();
      for (let i = 0; i < text.length; i++) {
        const list = at.get(text.charCodeAt(i)) ?? [];
        list.push(i);
        at.set(text.charCodeAt(i), list);
      }
      const mask = [0x2a, 0x23, 0x7e, 0x21, 0x3f].find((b) => !at.has(b)) ?? 0x00;
      this.secrets.push({ text, raw: Buffer.from(text, 'latin1'), mask, at });
      longest = Math.max(longest, text.length * 6);
      for (const code of at.keys()) codes.add(code);
    }
    this.hold = Math.max(0, longest - 1);
    const needles = codes.size ? ['\\u'] : [];
    for (const c of ['/', '"', '\\']) if (codes.has(c.charCodeAt(0))) needles.push(`\\${c}`);
    // %XX spells ASCII only, whose first hex digit is 0-7: a numeral, in one case.
    for (const digit of new Set([...codes].map((code) => code >> 4))) needles.push(`%${digit}`);
    this.escapeNeedles = needles.map((n) => Buffer.from(n, 'latin1'));
    this.startBytes = [...new Set([...this.secrets.map((secret) => secret.raw[0]!), BACKSLASH, PERCENT])];
    for (const byte of this.startBytes) this.startable[byte] = 1;
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  /**
   * Masks, in place, every spelling in `buf` that starts at or after `from` and ends within it; says whether it
   * masked any. A spelling that runs past the end is left for the next call, which sees it whole.
   */
  maskIn(buf: Buffer, from = 0): boolean {
    let masked = false;
    for (const secret of this.secrets) {
      for (let i = buf.indexOf(secret.raw, from); i !== -1; i = buf.indexOf(secret.raw, i + secret.raw.length)) {
        buf.fill(secret.mask, i, i + secret.raw.length);
        masked = true;
      }
    }
    // An escaped spelling holds a `\` or a `%`; its first escape is where it is found, the characters before it raw.
    // One search for each of the two bytes first: text without them (most of it) costs nothing more.
    const firstBackslash = buf.indexOf(BACKSLASH, from);
    const firstPercent = buf.indexOf(PERCENT, from);
    for (const needle of this.escapeNeedles) {
      const first = needle[0] === BACKSLASH ? firstBackslash : firstPercent;
      if (first === -1) continue;
      for (let p = buf.indexOf(needle, first); p !== -1; p = buf.indexOf(needle, p + 1)) {
        const escaped = escapeAt(buf, p);
        if (!escaped) continue;
        for (const secret of this.secrets) {
          const places = secret.at.get(escaped.code);
          if (!places) continue;
          for (const k of places) {
            const start = p - k;
            if (start < from || !rawAt(buf, start, secret.text, 0, k)) continue;
            const end = spellingEnd(buf, p, secret.text, k);
            if (end < 0) continue;
            buf.fill(secret.mask, start, end);
            masked = true;
            break;
          }
        }
      }
    }
    return masked;
  }

  /**
   * Where, in the last `hold` bytes of `buf`, the earliest spelling starts that the buffer's end cuts off (it may
   * be completed by the next chunk), with how many of the secret's characters it has so far; undefined when none
   * does, so everything can be passed on at once (a stream of small events is not held back).
   */
  cutOff(buf: Buffer): { start: number; chars: number } | undefined {
    const from = Math.max(0, buf.length - this.hold);
    // The first byte in the tail that a spelling can start with (one native search per such byte), then a plain
    // loop from there: data full of a secret's first character costs one pass, not a search per position.
    let first = -1;
    for (const byte of this.startBytes) {
      const at = buf.indexOf(byte, from);
      if (at !== -1 && (first === -1 || at < first)) first = at;
    }
    if (first === -1) return undefined;
    const startable = this.startable;
    for (let s = first; s < buf.length; s++) {
      if (startable[buf[s]!] === 0) continue;
      const chars = cutSpellingAt(this.secrets, buf, s);
      if (chars !== -1) return { start: s, chars };
    }
    return undefined;
  }
}

/** How many characters of a secret's spelling run from `s` to the end of `buf` (the most, of any secret), or -1. */
function cutSpellingAt(secrets: readonly Secret[], buf: Buffer, s: number): number {
  let best = -1;
  for (const secret of secrets) {
    const byte = buf[s];
    if (byte !== secret.raw[0] && byte !== BACKSLASH && byte !== PERCENT) continue;
    // The usual miss, decided here: the first character raw, the next byte neither the second nor an escape.
    const next = buf[s + 1];
    if (byte === secret.raw[0] && next !== undefined && next !== secret.raw[1] && next !== BACKSLASH && next !== PERCENT) continue;
    const end = secret.at.size === 0 ? rawPrefixEnd(buf, s, secret.raw) : spellingEnd(buf, s, secret.text, 0);
    if (end <= -2) best = Math.max(best, -2 - end);
  }
  return best;
}

function rawPrefixEnd(buf: Buffer, s: number, raw: Buffer): number {
  const n = buf.length - s;
  if (n >= raw.length) return -1;
  return buf.subarray(s).equals(raw.subarray(0, n)) ? -2 - n : -1;
}

/** The character an escape at `p` spells and its length, or undefined when `p` starts no escape. */
function escapeAt(buf: Buffer, p: number): { code: number; length: number } | undefined {
  if (buf[p] === PERCENT) {
    const code = hexAt(buf, p + 1, 2);
    // %XX spells ASCII only (KnownSecrets.scrub's rule: a multi-byte character is several escapes).
    return code !== -1 && code < 0x80 ? { code, length: 3 } : undefined;
  }
  if (buf[p] !== BACKSLASH || p + 1 >= buf.length) return undefined;
  const next = buf[p + 1]!;
  if (next === 0x75 /* u */) {
    const code = hexAt(buf, p + 2, 4);
    return code === -1 ? undefined : { code, length: 6 };
  }
  if (next === 0x2f || next === 0x22 || next === BACKSLASH) return { code: next, length: 2 };
  return undefined;
}

function hexAt(buf: Buffer, p: number, digits: number): number {
  if (p + digits > buf.length) return -1;
  let value = 0;
  for (let i = 0; i < digits; i++) {
    const b = buf[p + i]!;
    const d = b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x41 && b <= 0x46 ? b - 0x37 : b >= 0x61 && b <= 0x66 ? b - 0x57 : -1;
    if (d === -1) return -1;
    value = value * 16 + d;
  }
  return value;
}

function rawAt(buf: Buffer, start: number, text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[start + i - from] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * Where a spelling of `text` from its character `k` on, starting at byte `p`, ends (exclusive); -1 when it is
 * none; `-2 - j` when the buffer ends (or an escape is cut off by its end) after `j` characters matched: it may go
 * on in the next chunk. Each character raw or escaped; backtracks where both could apply (a secret holding `%` or
 * `\` itself).
 */
function spellingEnd(buf: Buffer, p: number, text: string, k: number): number {
  if (k === text.length) return p;
  if (p >= buf.length) return -2 - k;
  const code = text.charCodeAt(k);
  const escaped = escapeAt(buf, p);
  let partial = -1;
  if (escaped && escaped.code === code) {
    const end = spellingEnd(buf, p + escaped.length, text, k + 1);
    if (end >= 0) return end;
    partial = end;
  } else if ((buf[p] === BACKSLASH || buf[p] === PERCENT) && cutEscape(buf, p)) {
    partial = -2 - k;
  }
  if (buf[p] === code) {
    const end = spellingEnd(buf, p + 1, text, k + 1);
    if (end >= 0 || partial === -1) return end;
    return Math.min(end, partial);
  }
  return partial;
}

/** An escape's first bytes at the buffer's end, which the next chunk may complete (`%4`, `\u00`, `\`). */
function cutEscape(buf: Buffer, p: number): boolean {
  const left = buf.length - p;
  if (buf[p] === PERCENT) return left < 3 && (left === 1 || hexAt(buf, p + 1, left - 1) !== -1);
  if (left === 1) return true;
  return buf[p + 1] === 0x75 && left < 6 && (left === 2 || hexAt(buf, p + 2, left - 2) !== -1);
}

/**
 * The masker as a stream stage: each chunk scanned with the bytes held back from the one before, and passed on
 * less the last `hold` bytes (which wait for the next chunk, or the end). A chunk at least `hold` long is scanned
 * where it lies, and only the seam (the held bytes and the chunk's first `hold`) is copied to be scanned across.
 */
export class MaskingStream extends Transform {
  private held: Buffer = EMPTY;

  constructor(private readonly masker: SecretMasker) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const hold = this.masker.hold;
    const held = this.held;
    if (held.length > 0 && chunk.length >= hold) {
      // The seam: every spelling that starts in the held bytes ends within it.
      const seam = Buffer.concat([held, chunk.subarray(0, hold)]);
      if (this.masker.maskIn(seam)) seam.copy(chunk, 0, held.length);
      this.push(seam.subarray(0, held.length));
      this.scanAndPass(chunk);
    } else {
      this.scanAndPass(held.length > 0 ? Buffer.concat([held, chunk]) : chunk);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    const held = this.held;
    if (held.length > 0) {
      // The body ends inside what may have been a secret's spelling: eight characters or more of one are masked (as
      // KnownSecrets.scrub masks a secret's start before a `…`); fewer are no secret's worth.
      const cut = this.masker.cutOff(held);
      if (cut && cut.chars >= 8) held.fill(0x2a, cut.start);
      this.push(held);
    }
    this.held = EMPTY;
    done();
  }

  /**
   * Masks `buf` and passes it on, all but a spelling its end cuts off, which is kept (a copy: the chunk goes) to be
   * read with the next chunk.
   */
  private scanAndPass(buf: Buffer): void {
    this.masker.maskIn(buf);
    const cut = this.masker.cutOff(buf);
    const keepFrom = cut ? cut.start : buf.length;
    if (keepFrom > 0) this.push(keepFrom === buf.length ? buf : buf.subarray(0, keepFrom));
    this.held = keepFrom === buf.length ? EMPTY : Buffer.from(buf.subarray(keepFrom));
  }
}
