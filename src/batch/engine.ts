/**
 * The batch engine under `plat batch` and the library's client.batch(): requests pulled one at a time from an
 * (async) iterable by N workers that share ONE ApiClient (one session, one refresh for all, the origin rule and the
 * 401 replay of request.ts) and one governor (a server's pause holds every worker). Results come out in completion
 * order, or in input order with `ordered` (held back at most a window of a few times the concurrency). Memory is
 * bounded: nothing pulls the next request while the output it would add to is full.
 */
import type { Context } from '../context.js';
import { bodyReadError } from '../http/body-error.js';
import { AuthError } from '../errors.js';
import { createGovernor, GOVERNED_RETRIES, type Governor } from './governor.js';
import { nestsDeeperThan } from '../requests/depth.js';
import { responseError } from '../session/response-error.js';
import { type ApiClient, type ApiRequest, type ApiResponse } from '../session/request.js';

export interface BatchItem {
  /** 1-based line of the input (the library: 1-based position). */
  line: number;
  /** The line's own id, or its number. */
  id: string | number;
  request: ApiRequest;
  /** Sent as Idempotency-Key on every try; also makes a non-idempotent request safe to repeat. */
  idempotencyKey?: string;
  /**
   * Already known, nothing to send (a line the journal says was in flight when a run ended, with no way to repeat
   * it safely): passed through to the results in its place.
   */
  settled?: BatchResult;
}

export interface BatchResult {
  id: string | number;
  line: number;
  /** The HTTP status; null when no response came (network failure, unknown). */
  status: number | null;
  ok: boolean;
  body?: unknown;
  error?: string;
  /** This line's request was sent but its outcome is not known (interrupted, or in flight when a run died). */
  unknown?: boolean;
}

export interface BatchOptions {
  concurrency: number;
  ratePerSecond?: number;
  ordered?: boolean;
  failFast?: boolean;
  /** Awaited before the request goes out (the journal records the line as in flight). */
  onStart?(item: BatchItem): Promise<void>;
  /** Awaited before the result is handed on (the journal records the outcome). */
  onDone?(item: BatchItem, result: BatchResult): Promise<void>;
}

export interface BatchRun {
  results: AsyncIterable<BatchResult>;
  governor: Governor;
  /** Lines started and finished so far. */
  stats: { started: number; done: number; failed: number };
  /** Set when the session ended mid-run (exit 4), after the results end. */
  readonly sessionEnded: AuthError | undefined;
  /** Set when the run stopped at a failure (fail-fast). */
  readonly stoppedEarly: boolean;
}

/** A response body larger than this is not kept in the result (an error says so): results are one line each. */
const MAX_RESULT_BODY_BYTES = 8 * 1024 * 1024;

export function runBatch(ctx: Context, client: ApiClient, items: AsyncIterable<BatchItem> | Iterable<BatchItem>, options: BatchOptions): BatchRun {
  const governor = createGovernor({ ratePerSecond: options.ratePerSecond, signal: ctx.signal, now: () => ctx.now() });
  const concurrency = Math.max(1, options.concurrency);
  const window = concurrency * 4;
  const source = (Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : (items as Iterable<BatchItem>)[Symbol.iterator]()) as
    | AsyncIterator<BatchItem>
    | Iterator<BatchItem>;
  const stats = { started: 0, done: 0, failed: 0 };
  let stop = false;
  let sessionEnded: AuthError | undefined;
  let stoppedEarly = false;
  let failure: unknown;
  let allDone = false;

  // Output: completion order in `ready`; with `ordered`, results wait in `held` until every earlier one is out.
  const ready: BatchResult[] = [];
  const held = new Map<number, BatchResult>();
  let nextSeq = 0;
  let emitSeq = 0;
  let wake: (() => void) | undefined;
  let space: Array<() => void> = [];
  const signalConsumer = () => {
    wake?.();
    wake = undefined;
  };
  const signalWorkers = () => {
    const waiting = space;
    space = [];
    for (const resolve of waiting) resolve();
  };
  const backlog = () => ready.length + held.size;

  let pulling: Promise<unknown> = Promise.resolve();
  /** One pull at a time: iterators (readline, generators) are not made for parallel next(). */
  const pull = (): Promise<{ item: BatchItem; seq: number } | undefined> => {
    const next = pulling.then(async () => {
      if (stop || ctx.signal.aborted) return undefined;
      const step = await source.next();
      if (step.done || stop || ctx.signal.aborted) return undefined;
      return { item: step.value, seq: nextSeq++ };
    });
    pulling = next.catch(() => undefined);
    return next;
  };

  const deliver = (seq: number, result: BatchResult) => {
    if (options.ordered) {
      held.set(seq, result);
      while (held.has(emitSeq)) {
        ready.push(held.get(emitSeq)!);
        held.delete(emitSeq);
        emitSeq++;
      }
    } else {
      ready.push(result);
    }
    signalConsumer();
  };

  const worker = async () => {
    for (;;) {
      // Bounded: no new line while the consumer is a window behind (or, ordered, an early line still runs).
      while (!stop && !ctx.signal.aborted && (backlog() >= window || (options.ordered && nextSeq - emitSeq >= window))) {
        await new Promise<void>((resolve) => space.push(resolve));
      }
      const next = await pull();
      if (!next) return;
      const { item, seq } = next;
      let result: BatchResult;
      if (item.settled) {
        result = item.settled;
      } else {
        stats.started++;
        await options.onStart?.(item);
        try {
          result = await sendOne(ctx, client, item, governor);
        } catch (error) {
          if (error instanceof AuthError) {
            // The session ended (refresh refused): nothing more can succeed; the line stays "in flight" in the journal.
            sessionEnded ??= error;
            stop = true;
            signalWorkers();
            return;
          }
          if (ctx.signal.aborted) return; // interrupted: the line's outcome is unknown, and the journal says so
          // A body that broke off or ran past its deadline is said as plat call says it, not as the stream's error.
          result = { id: item.id, line: item.line, status: null, ok: false, error: bodyReadError(error, item.request.url).message };
        }
        if (ctx.signal.aborted && result.status === null) return;
        result = scrubbed(ctx, result);
        await options.onDone?.(item, result);
      }
      stats.done++;
      if (!result.ok) {
        stats.failed++;
        if (options.failFast) {
          stoppedEarly = true;
          stop = true;
          signalWorkers();
        }
      }
      deliver(seq, result);
    }
  };

  const finished = Promise.all(Array.from({ length: concurrency }, () => worker().catch((error) => {
    failure ??= error;
    stop = true;
    signalWorkers();
  }))).then(() => {
    // With a stop, later lines may never come: what is held in order goes out as far as it is complete.
    for (const seq of [...held.keys()].sort((a, b) => a - b)) ready.push(held.get(seq)!);
    held.clear();
    allDone = true;
    signalConsumer();
  });

  async function* results(): AsyncGenerator<BatchResult> {
    try {
      for (;;) {
        if (ready.length > 0) {
          const result = ready.shift()!;
          signalWorkers();
          yield result;
          continue;
        }
        if (allDone) break;
        // Woken by the next result or by the end. Not a race with `finished`: every race would add a reaction to that
        // one long-pending promise, one per wait, and memory would grow with the number of lines.
        await new Promise<void>((resolve) => (wake = resolve));
      }
      if (failure) throw failure;
    } finally {
      // A consumer that stops early (break, --fail-fast in a loop) stops the workers too.
      stop = true;
      signalWorkers();
      await finished;
      await (source as AsyncIterator<BatchItem>).return?.();
    }
  }

  return {
    results: results(),
    governor,
    stats,
    get sessionEnded() {
      return sessionEnded;
    },
    get stoppedEarly() {
      return stoppedEarly;
    },
  };
}

/**
 * A result as it leaves the engine (stdout, the journal, a program's loop): no secret this process holds, in any
 * form the response spelt it (a parsed body's strings; a text body's JSON or percent escapes), nor in the error.
 */
function scrubbed(ctx: Context, result: BatchResult): BatchResult {
  const out = { ...result };
  if (out.error !== undefined) out.error = ctx.secrets.scrub(out.error);
  if (out.body !== undefined) out.body = ctx.secrets.scrubValue(out.body);
  return out;
}

async function sendOne(ctx: Context, client: ApiClient, item: BatchItem, governor: Governor): Promise<BatchResult> {
  const headers = { ...item.request.headers };
  if (item.idempotencyKey) headers['idempotency-key'] = item.idempotencyKey;
  const response = await client.send({
    ...item.request,
    headers,
    governor,
    // 429/503 are retried under the governor for every method (the server says it did not act); 502/504 and resets
    // only for idempotent methods, as request.ts decides.
    retries: item.request.retries ?? GOVERNED_RETRIES,
    // No { stepUp }: a batch never asks (its lines run unattended, many at once); a 403 insufficient_scope is that
    // line's result, and --fail-fast stops there.
  });
  const body = await readBody(response);
  const ok = response.status >= 200 && response.status < 300;
  const result: BatchResult = { id: item.id, line: item.line, status: response.status, ok };
  if (body.error) result.error = body.error;
  else if (body.value !== undefined) result.body = body.value;
  // A 401 naming the API's sign-in metadata (plat remembered it): the line says which login to run.
  if (response.signIn && !result.error) result.error = responseError(ctx, { ...item.request, headers }, response)?.message;
  return result;
}

/** How deep a result's body may nest and still be written as JSON (deeper, it goes as its text). */
const MAX_RESULT_DEPTH = 256;

async function readBody(response: ApiResponse): Promise<{ value?: unknown; error?: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_RESULT_BODY_BYTES) {
      response.body.destroy();
      return { error: `The response body is larger than ${MAX_RESULT_BODY_BYTES / 1024 / 1024} MiB; plat batch keeps results to one line each. Use plat call for this one.` };
    }
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  const text = Buffer.concat(chunks).toString('utf8');
  const type = String(response.headers['content-type'] ?? '');
  if (/\bjson\b/i.test(type)) {
    try {
      const value: unknown = JSON.parse(text);
      // A result line is written with JSON.stringify, which recurses: a body nested deeper than a line can hold is
      // kept as its text (still the server's JSON, one string), never a stack overflow.
      return { value: nestsDeeperThan(value, MAX_RESULT_DEPTH) ? text : value };
    } catch {
      return { value: text };
    }
  }
  return { value: text };
}
