/**
 * `plat batch [FILE|-]`: NDJSON requests in, NDJSON results out, through the session's batch engine
 * (session/batch.ts: N workers, one session, one governor) and, with --journal, resumable exactly once.
 *
 * The input is read twice, streaming both times, so memory stays flat whatever its length: first every line is
 * checked (all problems listed with their line numbers, nothing sent), then the lines are sent. Standard input is
 * copied to a private temporary file on the first pass, since it cannot be read again.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { FullApiIndex } from '../catalogue/openapi.js';
import type { Context } from '../context.js';
import { AuthError, ExitStatus, InterruptedError, PlatError, UsageError } from '../errors.js';
import { currentProfile, isIdempotent, openBatchJournal, openClient, platformOf, startBatch, type ApiClient, type BatchItem, type BatchResult, type BatchRun, type Journal } from '../session/index.js';
import { sanitize } from '../text.js';
import { LineError, prepareLine, type LineContext } from './batch-lines.js';
import { parsePositiveInt } from './options.js';

export interface BatchFlags {
  concurrency?: string;
  rate?: string;
  journal?: string;
  idempotencyKey?: boolean;
  ordered?: boolean;
  failFast?: boolean;
  check?: boolean;
  jq?: string;
}

/** Bad lines listed before giving up; the rest are counted. */
const MAX_LISTED_PROBLEMS = 20;

export async function run(ctx: Context, file: string | undefined, flags: BatchFlags): Promise<void> {
  const concurrency = parsePositiveInt(flags.concurrency, '--concurrency', 256) ?? 4;
  const rate = flags.rate === undefined ? undefined : parseRate(flags.rate);
  const jq = flags.jq === undefined ? undefined : await (await import('../jq.js')).compileJq(flags.jq, { pretty: false, signal: ctx.signal });
  const input = await openInput(ctx, file);
  try {
    let client: ApiClient | undefined;
    let baseUrl: string | undefined;
    if (flags.check) {
      // The platform a real run would use, checked as it would be (not a raw flag or variable).
      baseUrl = platformOf(ctx, await currentProfile(ctx));
    } else {
      client = await openClient(ctx, { auth: 'auto' });
      baseUrl = client.baseUrl;
    }
    const lineContext = makeLineContext(ctx, baseUrl);
    const total = await checkAll(input, lineContext);
    if (flags.check) {
      ctx.io.note(`${total} request${total === 1 ? '' : 's'} checked: every line is well-formed.`);
      return;
    }
    await send(ctx, client!, input, lineContext, total, { ...flags, concurrency, rate, jq });
  } finally {
    await input.cleanup();
  }
}

interface Input {
  /** A fresh stream of the input's text (after the first pass: the file, or stdin's copy). */
  open(): Readable;
  /** The first pass reads this instead (stdin, copied as it is read). */
  first(): Readable;
  /** Settles once the first pass's copy is whole (rejects, in plat's words, if it could not be written). */
  copied(): Promise<void>;
  cleanup(): Promise<void>;
}

async function openInput(ctx: Context, file: string | undefined): Promise<Input> {
  if (file !== undefined && file !== '-') {
    try {
      const info = await fs.stat(file);
      if (!info.isFile()) throw new UsageError(`${file} is not a regular file: give plat batch a file of NDJSON lines, or - for stdin.`);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
    const open = () => createReadStream(file, 'utf8');
    return { open, first: open, copied: async () => {}, cleanup: async () => {} };
  }
  if (ctx.io.stdinIsTTY) throw new UsageError('plat batch reads NDJSON requests from a file or a pipe: plat batch requests.ndjson, or … | plat batch -.');
  const cannotCopy = (error: unknown) =>
    new PlatError(`Cannot keep a copy of stdin in ${os.tmpdir()} for plat batch's second pass: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Free some space there (or set TMPDIR), or give plat batch a file.`);
  let dir: string;
  try {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'plat-batch-'));
  } catch (error) {
    throw cannotCopy(error);
  }
  const copy = path.join(dir, 'input.ndjson');
  let done: Promise<void> = Promise.resolve();
  return {
    open: () => createReadStream(copy, 'utf8'),
    first: () => {
      const out = createWriteStream(copy, { mode: 0o600 });
      // The copy is read back only after the first pass has consumed stdin to its end and the copy is flushed; a
      // write that fails (a full disk) is said in plat's words, never an unhandled stream error.
      done = new Promise((resolve, reject) => {
        out.once('close', resolve);
        out.once('error', (error) => reject(cannotCopy(error)));
      });
      done.catch(() => {}); // awaited by copied(); never an unhandled rejection meanwhile
      ctx.io.stdin.pipe(out);
      return ctx.io.stdin as Readable;
    },
    copied: () => done,
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

function makeLineContext(ctx: Context, baseUrl: string | undefined): LineContext {
  let index: Promise<FullApiIndex> | undefined;
  return {
    baseUrl,
    index: () => {
      if (!baseUrl) return Promise.reject(new LineError('an op line needs the platform: log in first, or pass --base-url'));
      index ??= import('../catalogue/fetch-openapi.js').then(({ getFullApiIndex }) => getFullApiIndex(ctx, baseUrl));
      return index;
    },
  };
}

/** The first pass: every line checked; all problems (up to a point) listed at once, nothing sent. Returns the request count. */
async function checkAll(input: Input, context: LineContext): Promise<number> {
  const problems: string[] = [];
  let bad = 0;
  let count = 0;
  let number = 0;
  const stream = input.first();
  for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
    number++;
    try {
      if (await prepareLine(text, context)) count++;
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      bad++;
      if (problems.length < MAX_LISTED_PROBLEMS) problems.push(`  line ${number}: ${sanitize(error.message, 300)}`);
    }
  }
  await input.copied();
  if (bad > 0) {
    const more = bad > problems.length ? `\n  … and ${bad - problems.length} more` : '';
    throw new UsageError(`${bad} line${bad === 1 ? ' is' : 's are'} not a request plat batch can send; nothing was sent:\n${problems.join('\n')}${more}`);
  }
  return count;
}

interface SendOptions {
  concurrency: number;
  rate?: number;
  jq?: { apply(json: string): Promise<string> | string };
  journal?: string;
  idempotencyKey?: boolean;
  ordered?: boolean;
  failFast?: boolean;
}

async function send(ctx: Context, client: ApiClient, input: Input, context: LineContext, total: number, options: SendOptions): Promise<void> {
  let journal: Journal | undefined;
  let lineHash: ((text: string) => string) | undefined;
  if (options.journal) ({ journal, lineHash } = await openBatchJournal(options.journal));
  const hashes = new Map<number, string>();
  let skipped = 0;
  let unknown = 0;

  async function* items(): AsyncGenerator<BatchItem> {
    let number = 0;
    for await (const text of createInterface({ input: input.open(), crlfDelay: Infinity })) {
      number++;
      const prepared = await prepareLine(text, context);
      if (!prepared) continue;
      const id = prepared.id ?? number;
      const method = prepared.request.method.toUpperCase();
      const prior = journal?.prior(number);
      let key: string | undefined;
      if (journal && lineHash) {
        const hash = lineHash(text);
        if (prior && prior.hash !== hash) {
          throw new UsageError(`The journal ${journal.file} was written for other input: line ${number} is not the line it recorded. Give a new journal file for new input.`);
        }
        hashes.set(number, hash);
        if (prior && !prior.inFlight && prior.ok) {
          skipped++;
          continue;
        }
      }
      if (options.idempotencyKey) key = prior?.key ?? randomUUID();
      if (prior?.inFlight && !isIdempotent(method) && !(key && prior.key)) {
        // Sent by a run that died before its answer came: repeating it might do it twice.
        unknown++;
        hashes.delete(number);
        yield {
          line: number,
          id,
          request: prepared.request,
          settled: {
            id,
            line: number,
            status: null,
            ok: false,
            unknown: true,
            error: `unknown: line ${number} (${method}) was in flight when an earlier run ended, and is not sent again without an Idempotency-Key. Check it on the platform${options.idempotencyKey ? '' : ', or use --idempotency-key from the first run on'}.`,
          },
        };
        continue;
      }
      yield { line: number, id, request: prepared.request, idempotencyKey: key };
    }
  }

  const started = ctx.now();
  const batch = await startBatch(ctx, client, items(), {
    concurrency: options.concurrency,
    ratePerSecond: options.rate,
    ordered: options.ordered,
    failFast: options.failFast,
    onStart: journal ? (item) => journal!.sent(item.line, hashes.get(item.line)!, item.idempotencyKey) : undefined,
    onDone: journal
      ? async (item, result) => {
          hashes.delete(item.line);
          await journal!.done(item.line, { ok: result.ok, status: result.status });
        }
      : undefined,
  });
  const progress = ctx.io.stderrIsTTY ? startProgress(ctx, batch, total, started) : undefined;
  let failed = 0;
  let succeeded = 0;
  try {
    for await (const result of batch.results) {
      if (result.ok) succeeded++;
      else failed++;
      write(ctx, await render(result, options.jq));
    }
  } finally {
    progress?.stop();
    await journal?.close();
  }
  const seconds = (ctx.now() - started) / 1000;
  const parts = [`${succeeded} succeeded`, `${failed} failed`];
  if (unknown) parts.push(`${unknown} unknown`);
  if (skipped) parts.push(`${skipped} skipped (done in an earlier run)`);
  if (batch.governor.pauses) parts.push(`${batch.governor.pauses} pause${batch.governor.pauses === 1 ? '' : 's'} asked by the server`);
  const pace = seconds > 0 ? `, ${Math.round((succeeded + failed - unknown) / seconds)}/s` : '';
  ctx.io.note(`plat batch: ${parts.join(', ')} in ${seconds.toFixed(1)} s${pace}.`);
  const where = options.journal ? ` The journal ${options.journal} records where it stopped; run the same command again to go on.` : '';
  if (ctx.signal.aborted) {
    // main.ts says "Interrupted." itself; where to go on from is this command's to say.
    if (where) ctx.io.note(where.trim());
    throw new InterruptedError();
  }
  if (batch.sessionEnded) throw new AuthError(`${batch.sessionEnded.message}${where}`);
  if (batch.stoppedEarly) throw new PlatError(`Stopped at the first failure (--fail-fast).${where}`);
  if (failed > 0) throw new ExitStatus(1);
}

async function render(result: BatchResult, jq: SendOptions['jq']): Promise<string> {
  const shape: Record<string, unknown> = { id: result.id, line: result.line, status: result.status, ok: result.ok };
  if (result.error !== undefined) shape.error = result.error;
  else if (result.body !== undefined) shape.body = result.body;
  const json = JSON.stringify(shape);
  return jq ? await jq.apply(json) : `${json}\n`;
}

function write(ctx: Context, text: string): void {
  if (text) ctx.io.out(text);
}

function startProgress(ctx: Context, batch: BatchRun, total: number, started: number) {
  const draw = () => {
    const { done, failed } = batch.stats;
    const elapsed = (ctx.now() - started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const eta = rate > 0 ? Math.round((total - done) / rate) : undefined;
    const paused = batch.governor.paused() ? ' · paused by the server' : '';
    ctx.io.stderr.write(`\r\x1b[2K${done}/${total} done · ${failed} failed${paused} · ${rate.toFixed(0)}/s${eta !== undefined ? ` · ETA ${eta} s` : ''}`);
  };
  const timer = setInterval(draw, 250);
  return {
    stop() {
      clearInterval(timer);
      ctx.io.stderr.write('\r\x1b[2K');
    },
  };
}

function parseRate(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(value.trim());
  const n = match ? Number(match[1]) : NaN;
  if (!(n > 0) || n > 100_000) throw new UsageError(`--rate expects requests per second, such as 10/s or 2.5 (got "${value}").`);
  return n;
}
