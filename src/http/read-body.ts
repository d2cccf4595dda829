/**
 * A whole response body held in memory, up to `max` bytes, for the readers that parse it (UserInfo, a page of
 * --paginate). Read with events rather than for-await: the async iterator's promise per chunk was a measurable part
 * of plat's time per page, and ~0.7 ms of whoami. It fails with `tooLarge()` past the limit (the body is destroyed),
 * with the stream's own error, or with prematureClose() when the body closes before its end; each reader then says
 * that its own way (http/body-error.ts for most). readBodyUpTo keeps what fits instead of failing.
 */
import type { Readable } from 'node:stream';
import { prematureClose } from './network-codes.js';

export function readWholeBody(body: Readable, max: number, tooLarge: () => Error): Promise<Buffer> {
  return collect(body, max, tooLarge).then(({ bytes }) => bytes);
}

/**
 * The first `max` bytes of a body, and whether there was more (`cut`: the rest is not read, the body destroyed):
 * for a reader that shows what fits and says what was left out (plat mcp's tool results).
 */
export function readBodyUpTo(body: Readable, max: number): Promise<{ bytes: Buffer; cut: boolean }> {
  return collect(body, max, 'cut');
}

function collect(body: Readable, max: number, over: (() => Error) | 'cut'): Promise<{ bytes: Buffer; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        body.destroy();
        if (over !== 'cut') return reject(over());
        chunks.push(chunk.subarray(0, chunk.length - (size - max)));
        resolve({ bytes: Buffer.concat(chunks), cut: true });
        return;
      }
      chunks.push(chunk);
    });
    // A page is usually one chunk: no copy then.
    body.once('end', () => resolve({ bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), cut: false }));
    body.once('error', reject);
    body.once('close', () => {
      if (!body.readableEnded) reject(prematureClose());
    });
  });
}
