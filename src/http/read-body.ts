/**
 * A whole response body held in memory, up to `max` bytes, for the readers that parse it (UserInfo, a page of
 * --paginate). Read with events rather than for-await: the async iterator's promise per chunk was a measurable part
 * of plat's time per page, and ~0.7 ms of whoami. It fails with `tooLarge()` past the limit (the body is destroyed),
 * with the stream's own error, or with prematureClose() when the body closes before its end; each reader then says
 * that its own way (http/body-error.ts for most).
 */
import type { Readable } from 'node:stream';
import { prematureClose } from '../network-codes.js';

export function readWholeBody(body: Readable, max: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        body.destroy();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    // A page is usually one chunk: no copy then.
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    body.once('error', reject);
    body.once('close', () => {
      if (!body.readableEnded) reject(prematureClose());
    });
  });
}
