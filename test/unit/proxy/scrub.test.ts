/** src/proxy/scrub.ts: the session's secrets masked out of a streamed answer, in every spelling, at any split. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MaskingStream, SecretMasker } from '../../../src/proxy/scrub.js';
import { KnownSecrets } from '../../../src/redact.js';
import { acceptEncodingUpstream, decodersFor } from '../../../src/proxy/encoding.js';

const access = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl-_x';
const refresh = 'rt_9f8e7d6c5b4a3210/with"quote';
const secrets = [access, refresh];

/** The spellings KnownSecrets.scrub reads, each character chosen by `pick`. */
function spell(secret: string, pick: (i: number) => number): string {
  return [...secret]
    .map((c, i) => {
      const code = c.charCodeAt(0);
      const forms = [c, `\\u${code.toString(16).padStart(4, '0')}`, `%${code.toString(16).toUpperCase()}`, `%${code.toString(16)}`];
      if (c === '/' || c === '"') forms.push(`\\${c}`);
      return forms[pick(i) % forms.length];
    })
    .join('');
}

async function through(chunks: Buffer[], values = secrets): Promise<Buffer> {
  const out: Buffer[] = [];
  const stream = Readable.from(chunks).pipe(new MaskingStream(new SecretMasker(values)));
  for await (const chunk of stream) out.push(chunk as Buffer);
  return Buffer.concat(out);
}

function splitEvery(bytes: Buffer, size: (i: number) => number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = Math.max(1, size(i));
    chunks.push(Buffer.from(bytes.subarray(at, at + n)));
    at += n;
  }
  return chunks;
}

describe('MaskingStream', () => {
  const known = new KnownSecrets();
  known.remember(...secrets);
  const body = Buffer.from(
    [
      `{"auth":"Bearer ${access}",`,
      `"json":"${spell(access, () => 1)}","mixed":"${spell(access, (i) => (i * 7) % 5)}",`,
      `"url":"/next?t=${spell(access, (i) => (i % 3 === 0 ? 2 : i % 3 === 1 ? 3 : 0))}",`,
      `"refresh":"${spell(refresh, (i) => i % 5)}","raw":${JSON.stringify(refresh)}, "tail":"${access}"}`,
    ].join(''),
  );

  it('masks every spelling, at every split of the body, keeping its length', async () => {
    expect(known.scrub(body.toString('latin1'))).not.toBe(body.toString('latin1'));
    for (const size of [1, 2, 3, 5, 7, 64, 1000, 1 << 20]) {
      const out = await through(splitEvery(body, (i) => (size === 7 ? 1 + ((i * 13) % 11) : size)));
      const text = out.toString('latin1');
      expect(out.length, `chunks of ${size}`).toBe(body.length);
      expect(known.scrub(text), `chunks of ${size}`).toBe(text);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });

  it('passes a body without a secret on byte for byte, at once (nothing held back for the next chunk)', async () => {
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 31) % 256));
    expect((await through(splitEvery(bytes, (i) => 1 + ((i * 977) % 70_000))))).toEqual(bytes);
    const stream = new MaskingStream(new SecretMasker(secrets));
    const seen: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => seen.push(chunk));
    stream.write(Buffer.from('data: {"event":1}\n\n'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(Buffer.concat(seen).toString()).toBe('data: {"event":1}\n\n');
  });

  it('masks a body that ends inside a spelling of eight characters or more, and leaves a shorter one', async () => {
    const cut = await through([Buffer.from(`x ${access.slice(0, 20)}`)]);
    expect(cut.toString()).toBe(`x ${'*'.repeat(20)}`);
    const short = await through([Buffer.from('ends with eyJ')]);
    expect(short.toString()).toBe('ends with eyJ');
  });
});

describe('content codings', () => {
  it('offers the platform only what the proxy decodes; identity when nothing is named', () => {
    expect(acceptEncodingUpstream('gzip, deflate, br, zstd')).toBe('gzip, deflate, br');
    expect(acceptEncodingUpstream('zstd;q=1, compress')).toBe('identity');
    expect(acceptEncodingUpstream('*')).toBe('gzip, deflate, br');
    expect(acceptEncodingUpstream('gzip;q=0, br')).toBe('br');
    expect(acceptEncodingUpstream(undefined)).toBe('identity');
  });

  it('decodes gzip, deflate and br (and a stack of them), and none other', () => {
    expect(decodersFor(undefined)).toEqual([]);
    expect(decodersFor('identity')).toEqual([]);
    expect(decodersFor('gzip')).toHaveLength(1);
    expect(decodersFor('deflate, br')).toHaveLength(2);
    expect(decodersFor('zstd')).toBeUndefined();
    expect(decodersFor('gzip, compress')).toBeUndefined();
  });
});
