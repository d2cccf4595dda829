/**
 * A whole body held in memory up to a limit (UserInfo, a page of --paginate): its bytes, or why it has none; and
 * the first bytes of a body up to a limit, with whether there was more (plat mcp's tool results).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBodyUpTo, readWholeBody } from '../../../src/http/read-body.js';

const tooLarge = () => new Error('too large');
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('readWholeBody', () => {
  it('gives every byte, whether the body came in one chunk or several', async () => {
    const one = new PassThrough();
    const oneRead = readWholeBody(one, 100, tooLarge);
    one.end('{"a":1}');
    expect((await oneRead).toString('utf8')).toBe('{"a":1}');

    const several = new PassThrough();
    const severalRead = readWholeBody(several, 100, tooLarge);
    several.write('{"a":');
    await turn();
    several.end('[1,2]}');
    expect((await severalRead).toString('utf8')).toBe('{"a":[1,2]}');
  });

  it('fails with the caller\'s error past the limit, and destroys the body', async () => {
    const body = new PassThrough();
    const read = readWholeBody(body, 8, tooLarge);
    body.write('12345');
    await turn();
    body.write('6789');
    await expect(read).rejects.toThrow('too large');
    expect(body.destroyed).toBe(true);
  });

  it('fails with the stream\'s own error, and with a premature close when the body ends early', async () => {
    const failing = new PassThrough();
    const failed = readWholeBody(failing, 100, tooLarge);
    failing.destroy(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    await expect(failed).rejects.toMatchObject({ code: 'ECONNRESET' });

    const closing = new PassThrough();
    const closed = readWholeBody(closing, 100, tooLarge);
    closing.write('half');
    await turn();
    closing.destroy();
    await expect(closed).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});

describe('readBodyUpTo', () => {
  it('gives a body that fits whole, cut: false', async () => {
    const body = new PassThrough();
    const read = readBodyUpTo(body, 8);
    body.write('1234');
    await turn();
    body.end('5678');
    expect(await read).toEqual({ bytes: Buffer.from('12345678'), cut: false });
  });

  it('keeps exactly the first bytes past the limit, mid-chunk, says cut: true, and reads no more', async () => {
    const body = new PassThrough();
    const read = readBodyUpTo(body, 6);
    body.write('1234');
    await turn();
    body.write('56789');
    expect(await read).toEqual({ bytes: Buffer.from('123456'), cut: true });
    expect(body.destroyed).toBe(true);
  });
});
