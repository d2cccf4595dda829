/** A body streamed to stdout: byte for byte, and a body that closes before its end is said as one. */
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { bodyReadError } from '../../../src/http/body-error.js';
import { streamToStdout } from '../../../src/terminal/stream-out.js';

function sink() {
  const chunks: Buffer[] = [];
  const out = new Writable({ write: (chunk: Buffer, _encoding, done) => (chunks.push(chunk), done()) });
  return { out, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('streamToStdout', () => {
  it('writes every chunk and settles at the body\'s end, leaving stdout open', async () => {
    const body = new PassThrough();
    const { out, text } = sink();
    const done = streamToStdout(body, out);
    body.write('one ');
    body.end('two');
    await done;
    expect(text()).toBe('one two');
    expect(out.writableEnded).toBe(false);
  });

  it('fails a body that closes before its end, which the reader then says as a connection closed early', async () => {
    const body = new PassThrough();
    const { out, text } = sink();
    const done = streamToStdout(body, out);
    body.write('half');
    await new Promise((resolve) => setImmediate(resolve));
    body.destroy();
    const error = await done.catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(text()).toBe('half');
    expect(bodyReadError(error, new URL('https://school.example')).message).toBe(
      'The response from https://school.example broke off before it was complete (the connection was closed unexpectedly). Check your network and try again.',
    );
  });
});
