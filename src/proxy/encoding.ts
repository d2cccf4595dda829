/**
 * Content codings across the proxy. The masker (scrub.ts) reads bytes as the client will read them, so an answer
 * in a content coding is decoded in the proxy and passed on as identity: a client that could gunzip (or inflate,
 * or un-brotli) a reflected token never gets the compressed bytes. The platform is offered only the codings the
 * proxy can decode, so one it cannot (zstd, compress) is never asked for; an answer that comes in one all the same
 * is refused in the proxy's name, never passed on unscanned.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';

const DECODERS: Record<string, () => Transform> = {
  // Strict (no finishFlush): a compressed body cut short fails, and the client's connection is closed with it.
  gzip: () => createGunzip(),
  'x-gzip': () => createGunzip(),
  deflate: () => new InflateEitherFormat(),
  br: () => createBrotliDecompress(),
};

/**
 * `Content-Encoding: deflate` as browsers read it. HTTP means the zlib format (RFC 9110 §8.4.1.2: RFC 1950's header
 * and checksum around the deflate data), but some servers send the bare deflate data (RFC 1951), which browsers and
 * curl take too; refusing it would close a client's connection on an answer it can read without the proxy. The first
 * two bytes tell which, as Firefox decides: a zlib header names method 8 and a window of at most 32 KiB, and its two
 * bytes read as a number divide by 31. Either way the inflated bytes stream on to the masker as they come.
 */
class InflateEitherFormat extends Transform {
  private inner: Transform | undefined;
  private head = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.inner) {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < 2) return done();
      chunk = this.head;
      this.start(chunk);
      this.head = Buffer.alloc(0);
    }
    this.feed(chunk, done);
  }

  override _flush(done: TransformCallback): void {
    // A body of fewer than two bytes: the zlib inflater says what is wrong with it, as it did before.
    if (!this.inner) this.start(this.head).write(this.head);
    this.inner!.once('end', () => done());
    this.inner!.end();
  }

  // Backpressure: the inner inflater pauses when this stream's reader is full, and goes on when it reads again.
  override _read(size: number): void {
    this.inner?.resume();
    super._read(size);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.inner?.destroy();
    done(error);
  }

  private start(head: Buffer): Transform {
    const inner = zlibWrapped(head) ? createInflate() : createInflateRaw();
    this.inner = inner;
    inner.on('data', (data: Buffer) => {
      if (!this.push(data)) inner.pause();
    });
    // on, not once: a write that races the inner inflater's end may make it say so again after its first error.
    inner.on('error', (error) => this.destroy(error));
    return inner;
  }

  private feed(chunk: Buffer, done: TransformCallback): void {
    if (this.inner!.write(chunk)) done();
    else this.inner!.once('drain', () => done());
  }
}

/** RFC 1950's two-byte header: compression method 8 (deflate), a window of at most 32 KiB, FCHECK making a multiple of 31. */
function zlibWrapped(head: Buffer): boolean {
  if (head.length < 2) return true;
  const cmf = head[0]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | head[1]!) % 31 === 0;
}

/**
 * The Accept-Encoding to send the platform: the client's list less what the proxy cannot decode, or `identity`
 * when nothing is left or the client named none (no header means "any coding" to a server).
 */
export function acceptEncodingUpstream(given: string | undefined): string {
  if (!given) return 'identity';
  const kept: string[] = [];
  for (const part of given.split(',')) {
    const coding = part.split(';', 1)[0]!.trim().toLowerCase();
    if (/;\s*q\s*=\s*0(\.0*)?\s*$/i.test(part)) continue;
    if (coding === '*') {
      kept.push('gzip', 'deflate', 'br');
      continue;
    }
    if (coding in DECODERS) kept.push(part.trim());
  }
  return kept.length ? [...new Set(kept)].join(', ') : 'identity';
}

/**
 * The decoders for an answer's Content-Encoding, in the order to apply them (the last coding applied first
 * undone); [] for identity; undefined when a coding is one the proxy cannot decode.
 */
export function decodersFor(contentEncoding: string | string[] | undefined): Transform[] | undefined {
  const value = Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding;
  if (!value) return [];
  const codings = value
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  if (!codings.every((c) => c in DECODERS)) return undefined;
  return codings.reverse().map((c) => DECODERS[c]!());
}
