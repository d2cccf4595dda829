/**
 * Pipes a response body to stdout with flat memory. Node reads a body in 64 KiB buffers that live outside V8's
 * heap; V8 frees them only after a GC, and with nothing else allocating it runs one when external memory reaches
 * its 64 MiB soft limit, so a large download peaks at 86–89 MiB whatever its size. A minor GC (a scavenge, well
 * under a millisecond: the buffers' small JS wrappers are all young) frees them. It is forced only when the bytes
 * the buffers actually hold pass a budget (V8's own count of external memory, read every GC_CHECK_EVERY_BYTES for
 * half a microsecond), not after every fixed count of bytes: the scavenges V8 runs anyway for the wrappers free most
 * of them, and a forced one each MiB cost a 512 MiB download a third more CPU than Node's own pipe (issue 42).
 * test/cli/download.test.ts fails if this stops working; figures in test/bench/README.md.
 */
import type { Readable, Writable } from 'node:stream';
import { prematureClose } from '../http/network-codes.js';
import type * as v8 from 'node:v8';
import type * as vm from 'node:vm';

/** Bytes written between two forced minor GCs (plat proxy's pacing, proxy/forward.ts; `call --paginate` has its own). */
export const GC_EVERY_BYTES = 1024 * 1024;

/**
 * Bytes streamed between two looks at the external memory retained (streamToStdout): at worst (V8 slow to count
 * what a scavenge freed) a GC as often as GC_EVERY_BYTES made one, never more.
 */
const GC_CHECK_EVERY_BYTES = GC_EVERY_BYTES;

/**
 * External memory (mostly spent read buffers) above which a minor GC is forced. plat's own start holds 1-2 MiB.
 * Measured on 512 MiB and 1 GiB downloads (Node 20.20): a GC every MiB made 512 forced scavenges per 512 MiB and
 * peaked at 57 MiB; this budget makes ~170 at 60-62 MiB (V8 updates its count once it has swept the freed buffers,
 * a little after the scavenge); 5 MiB made ~255 at 59-60 MiB, 8 MiB ~150 at 61-62, 16 MiB peaked at 70.
 */
const RETAINED_BUDGET_BYTES = 6 * 1024 * 1024;

type Collect = (options: { type: 'minor' }) => void;
let collect: Collect | null | undefined;
let heapStatistics: (() => { external_memory?: number }) | undefined;

/**
 * V8's gc(), obtained at run time: the flag must be set before a context is created, so a fresh vm context is the
 * one that sees it (this process's own global never gets `gc`). Undefined behaviour here only costs memory: any
 * failure leaves the stream as Node would run it. Also used by `call --paginate` (commands/call/json.ts).
 */
export function minorGc(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    // Loaded here, once a body is large: node:v8 costs ~1.5 ms of start-up that small responses never need.
    const v8module = process.getBuiltinModule('node:v8') as typeof v8;
    heapStatistics = () => v8module.getHeapStatistics() as { external_memory?: number };
    v8module.setFlagsFromString('--expose-gc');
    const gc: unknown = (process.getBuiltinModule('node:vm') as typeof vm).runInNewContext('gc');
    // Back as it was at start: the context made keeps its gc(), and V8's hash of its flags, which a code cache must
    // match, is the start's again. Left set, the code cache bin/plat.js writes after such a run was refused at the
    // next start and written anew: a script downloading large bodies paid a whole compile at every run (issue 42).
    v8module.setFlagsFromString('--no-expose-gc');
    collect = typeof gc === 'function' ? (gc as Collect) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/**
 * A minor GC if the external memory V8 counts (array buffers: a stream's spent read buffers) is past
 * RETAINED_BUDGET_BYTES: collections paced by what is actually held, not by what went through. True if it collected.
 */
function collectIfRetained(): boolean {
  const gc = minorGc();
  if (!gc || !heapStatistics) return false;
  const external = heapStatistics().external_memory;
  if (external !== undefined && external < RETAINED_BUDGET_BYTES) return false;
  gc({ type: 'minor' });
  return true;
}

/**
 * Streams `body` to `stdout` byte for byte, with backpressure, leaving stdout open (plat writes after it), and
 * collects the spent read buffers when they hold more than RETAINED_BUDGET_BYTES (looked at every
 * GC_CHECK_EVERY_BYTES, counted in the write path, so no chunk is missed; node:v8 and the GC are set up only once a
 * body passes that size: small responses pay nothing). Plain events rather than
 * stream.pipeline() and a Transform: for the usual small body, pipeline's bookkeeping cost ~2 ms of CPU per run
 * between the body's end and the promise settling.
 */
export function streamToStdout(body: Readable, stdout: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let sinceCheck = 0;
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
      sinceCheck += chunk.length;
      if (sinceCheck >= GC_CHECK_EVERY_BYTES) {
        sinceCheck = 0;
        collectIfRetained();
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
