/**
 * The proxy's decoders (src/proxy/encoding.ts): `Content-Encoding: deflate` in either format servers send it — the
 * zlib format HTTP names, and the bare deflate data some servers send and browsers accept — strictly (a body cut
 * short fails), and with backpressure (a small body that inflates to a large one waits for its reader).
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { deflateRawSync, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodersFor } from '../../../src/proxy/encoding.js';

function deflater(): NonNullable<ReturnType<typeof decodersFor>>[number] {
  const decoders = decodersFor('deflate');
  expect(decoders).toHaveLength(1);
  return decoders![0]!;
}

/** The decoded bytes of `chunks` fed to a deflate decoder one by one. */
async function inflate(chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(chunks), deflater(), new Writable({ write: (chunk: Buffer, _e, done) => (out.push(chunk), done()) }));
  return Buffer.concat(out);
}

/** Every byte its own chunk: the format is told from the first two bytes, whichever chunks they come in. */
const byteByByte = (data: Buffer) => Array.from(data, (byte) => Buffer.from([byte]));

const text = Buffer.from(JSON.stringify({ headers: { authorization: 'Bearer reflected' }, padding: 'x'.repeat(5_000) }));

describe('Content-Encoding: deflate through the proxy', () => {
  it('inflates the zlib format (RFC 1950), whole or a byte at a time', async () => {
    expect(await inflate([deflateSync(text)])).toEqual(text);
    expect(await inflate(byteByByte(deflateSync(text)))).toEqual(text);
  });

  it('inflates bare deflate data (RFC 1951), as browsers do, whole or a byte at a time', async () => {
    expect(await inflate([deflateRawSync(text)])).toEqual(text);
    expect(await inflate(byteByByte(deflateRawSync(text)))).toEqual(text);
    // Every compression level: the first byte of bare data differs with the block type.
    for (const level of [0, 1, 6, 9]) expect(await inflate([deflateRawSync(text, { level })]), `level ${level}`).toEqual(text);
    for (const level of [0, 1, 6, 9]) expect(await inflate([deflateSync(text, { level })]), `level ${level}`).toEqual(text);
  });

  it('fails on a body cut short or corrupt in either format, and on an empty one, as the zlib inflater does', async () => {
    for (const packed of [deflateSync(text), deflateRawSync(text)]) {
      await expect(inflate([packed.subarray(0, packed.length - 8)])).rejects.toMatchObject({ code: 'Z_BUF_ERROR' });
    }
    await expect(inflate([Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff, 0xff])])).rejects.toThrow();
    await expect(inflate([])).rejects.toMatchObject({ code: 'Z_BUF_ERROR' });
    await expect(inflate([Buffer.from([0x78])])).rejects.toMatchObject({ code: 'Z_BUF_ERROR' });
  });

  it('holds back while its reader is slow: 64 MiB inflated from 64 KiB never piles up in the decoder', async () => {
    const size = 64 * 1024 * 1024;
    for (const packed of [deflateSync(Buffer.alloc(size)), deflateRawSync(Buffer.alloc(size))]) {
      expect(packed.length).toBeLessThan(128 * 1024);
      const decoder = deflater();
      let read = 0;
      let mostWaiting = 0;
      /**
       * The reader stops at its first chunk until what waits in the decoder has stopped growing (2,000 turns of the
       * event loop without a byte more) or has passed 1 MiB: a decoder that does not hold back goes on inflating
       * into its buffer meanwhile.
       */
      const stopped = async () => {
        for (let still = 0, last = -1; still < 2_000 && decoder.readableLength <= 1024 * 1024; ) {
          still = decoder.readableLength === last ? still + 1 : 0;
          last = decoder.readableLength;
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const slowReader = new Writable({
        highWaterMark: 16 * 1024,
        write(chunk: Buffer, _e, done) {
          const first = read === 0;
          read += chunk.length;
          mostWaiting = Math.max(mostWaiting, decoder.readableLength);
          if (first) void stopped().then(() => (mostWaiting = Math.max(mostWaiting, decoder.readableLength), done()));
          else setImmediate(done);
        },
      });
      await pipeline(Readable.from([packed]), decoder, slowReader);
      expect(read).toBe(size);
      expect(mostWaiting).toBeLessThan(1024 * 1024);
    }
  });

  it('leaves the other codings to zlib as before, and names none it cannot decode', () => {
    expect(decodersFor(undefined)).toEqual([]);
    expect(decodersFor('identity')).toEqual([]);
    expect(decodersFor('gzip, deflate')).toHaveLength(2);
    expect(decodersFor('zstd')).toBeUndefined();
  });
});
