/**
 * Pipes a response body to stdout with flat memory. Node reads a body in 64 KiB buffers that live outside V8's
 * heap; V8 frees them only after a GC, and with nothing else allocating it runs one when external memory reaches
 * its 64 MiB soft limit, so a large download peaks at 86–89 MiB whatever its size. Forcing a minor GC (a
 * scavenge, well under a millisecond: the buffers' small JS wrappers are all young) every 1 MiB written frees
 * them as they go: 64 MiB and 1 GiB downloads both peak at 57–59 MiB (every 2 MiB: 60–62), no slower (figures in
 * test/bench/README.md; test/cli/download.test.ts fails if this stops working).
 */
import type { Readable, Writable } from 'node:stream';
import { prematureClose } from '../http/network-codes.js';
import type * as v8 from 'node:v8';
import type * as vm from 'node:vm';

/** Bytes written between two forced minor GCs. */
export const GC_EVERY_BYTES = 1024 * 1024;

type Collect = (options: { type: 'minor' }) => void;
let collect: Collect | null | undefined;

/**
 * V8's gc(), obtained at run time: the flag must be set before a context is created, so a fresh vm context is the
 * one that sees it (this process's own global never gets `gc`). Undefined behaviour here only costs memory: any
 * failure leaves the stream as Node would run it. Also used by `call --paginate` (commands/call/json.ts).
 */
export function minorGc(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    // Loaded here, once a body is large: node:v8 costs ~1.5 ms of start-up that small responses never need.
    (process.getBuiltinModule('node:v8') as typeof v8).setFlagsFromString('--expose-gc');
    const gc: unknown = (process.getBuiltinModule('node:vm') as typeof vm).runInNewContext('gc');
    collect = typeof gc === 'function' ? (gc as Collect) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/**
 * Streams `body` to `stdout` byte for byte, with backpressure, leaving stdout open (plat writes after it), and
 * collects the spent read buffers every GC_EVERY_BYTES (counted in the write path, so no chunk is missed; the GC is
 * set up only once a body passes that size: small responses pay nothing). Plain events rather than
 * stream.pipeline() and a Transform: for the usual small body, pipeline's bookkeeping cost ~2 ms of CPU per run
 * between the body's end and the promise settling.
 */
export function streamToStdout(body: Readable, stdout: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let sinceGc = 0;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      stdout.off('drain', onDrain);
      stdout.off('error', settle);
      if (error) {
        body.destroy();
        reject(error);
      } else resolve();
    };
    const onData = (chunk: Buffer) => {
      sinceGc += chunk.length;
      if (sinceGc >= GC_EVERY_BYTES) {
        sinceGc = 0;
        minorGc()?.({ type: 'minor' });
      }
      if (!stdout.write(chunk)) body.pause();
    };
    const onDrain = () => body.resume();
    body.on('data', onData);
    stdout.on('drain', onDrain);
    stdout.once('error', settle);
    body.once('error', settle);
    body.once('end', () => {
      // Everything is in stdout's hands once its buffer has drained.
      if (stdout.writableNeedDrain) stdout.once('drain', () => settle());
      else settle();
    });
    body.once('close', () => {
      if (!body.readableEnded) settle(prematureClose());
    });
  });
}
