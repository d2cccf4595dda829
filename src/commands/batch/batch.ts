/**
 * `plat batch [FILE|-]`: NDJSON requests in, NDJSON results out, through the session's batch engine
 * (batch/engine.ts: N workers, one session, one governor) and, with --journal, resumable exactly once.
 *
 * Two passes over the input (input.ts), both part of the run (Ctrl-C ends either; progress shows from the
 * start; the summary's time covers both): first every line is checked (all problems listed with their line numbers,
 * raw lines' paths looked up in the API description, the journal's records matched to the lines) and nothing is
 * sent; then the lines are sent. What a rerun does with a line the journal knows is plan.ts's rule.
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { FullApiIndex } from '../../catalogue/openapi.js';
import type { Context } from '../../context.js';
import { AuthError, ExitStatus, InterruptedError, PlatError, UsageError } from '../../errors.js';
import { openBatchJournal, startBatch, type BatchItem, type BatchResult, type BatchRun, type Journal } from '../../batch/index.js';
import { currentProfile, openClient, platformOf, requestsOf, type ApiClient } from '../../session/index.js';
import { escapeJsonForTerminal, sanitize } from '../../terminal/text.js';
import { openInput, type Input } from './input.js';
import { LineError, pathProblem, prepareLine, type LineContext, type PreparedLine } from '../../requests/batch-line.js';
import { planLine, type LineAction, type UnknownChoice } from './plan.js';
import { checkSummary, idList, LISTED, openFailedFile, summarise, withId, type Checked, type Tally } from './report.js';
import { startProgress, type Progress } from './progress.js';
import { parsePositiveInt } from '../../requests/values.js';

export interface BatchFlags {
  concurrency?: string;
  rate?: string;
  journal?: string;
  idempotencyKey?: boolean;
  ordered?: boolean;
  failFast?: boolean;
  check?: boolean;
  strict?: boolean;
  jq?: string;
  failed?: string;
  resendUnknown?: boolean;
  settleUnknown?: string;
}

/** Lines checked between two turns of the event loop: Ctrl-C and the progress line are heard in between. */
const LINES_PER_TURN = 64;

export async function run(ctx: Context, file: string | undefined, flags: BatchFlags): Promise<void> {
  const started = ctx.now();
  const concurrency = parsePositiveInt(flags.concurrency, '--concurrency', 256) ?? 4;
  const rate = flags.rate === undefined ? undefined : parseRate(flags.rate);
  const choice = unknownChoice(flags);
  const jq = flags.jq === undefined ? undefined : await (await import('../../terminal/jq.js')).compileJq(flags.jq, { pretty: false, signal: ctx.signal });
  const input = await openInput(ctx, file);
  let journal: Journal | undefined;
  let progress: Progress | undefined;
  try {
    let client: ApiClient | undefined;
    let baseUrl: string | undefined;
    let profile: string;
    if (flags.check) {
      // The platform a real run would use, checked as it would be (not a raw flag or variable).
      const current = await currentProfile(ctx);
      baseUrl = platformOf(ctx, current);
      profile = current.name;
    } else {
      client = await openClient(ctx, { auth: 'auto' });
      baseUrl = client.baseUrl;
      profile = client.profile.name;
    }
    let lineHash: ((text: string) => string) | undefined;
    if (flags.journal) {
      if (!baseUrl) throw new UsageError('--journal records which platform its lines went to: log in first, or pass --base-url.');
      ({ journal, lineHash } = await openBatchJournal(flags.journal, requestsOf(ctx, { baseUrl, profile })));
    }
    progress = ctx.io.stderrIsTTY ? startProgress(ctx) : undefined;
    const lineContext = makeLineContext(ctx, baseUrl);
    const plan = journal && lineHash ? { journal, lineHash, choice } : undefined;
    const checked = await checkAll(ctx, input, lineContext, { plan, strict: flags.strict === true, progress });
    if (flags.check) {
      progress?.stop();
      ctx.io.note(checkSummary(checked));
      return;
    }
    await send(ctx, client!, input, lineContext, checked, { ...flags, concurrency, rate, jq, choice, plan, progress, started });
  } finally {
    progress?.stop();
    await journal?.close();
    await input.cleanup();
  }
}

function unknownChoice(flags: BatchFlags): UnknownChoice | undefined {
  const settle = flags.settleUnknown;
  if (settle !== undefined && settle !== 'done' && settle !== 'failed') {
    throw new UsageError(`--settle-unknown takes done (the requests happened) or failed (they did not), not "${sanitize(settle, 40)}".`);
  }
  if (settle !== undefined && flags.resendUnknown) throw new UsageError('Give --resend-unknown or --settle-unknown, not both: each says what became of the unknown lines.');
  if ((settle !== undefined || flags.resendUnknown) && !flags.journal) {
    throw new UsageError(`${flags.resendUnknown ? '--resend-unknown' : '--settle-unknown'} acts on the lines a journal records as unknown: give the run's --journal too.`);
  }
  return flags.resendUnknown ? 'resend' : settle;
}

function makeLineContext(ctx: Context, baseUrl: string | undefined): LineContext {
  let index: Promise<FullApiIndex> | undefined;
  return {
    baseUrl,
    index: () => {
      if (!baseUrl) return Promise.reject(new LineError('an op line needs the platform: log in first, or pass --base-url'));
      index ??= import('../../catalogue/fetch-openapi.js').then(({ getFullApiIndex }) => getFullApiIndex(ctx, baseUrl));
      return index;
    },
  };
}

interface Plan {
  journal: Journal;
  lineHash: (text: string) => string;
  choice: UnknownChoice | undefined;
}

/** One line as both passes see it: its journal key (its id, else its number), its hash and what to do with it. */
interface Planned {
  key: string | number;
  hash: string;
  action: LineAction;
}

function planFor(plan: Plan | undefined, prepared: PreparedLine, number: number): Planned | undefined {
  if (!plan) return undefined;
  const key = prepared.id ?? number;
  const hash = plan.lineHash(prepared.canonical);
  return { key, hash, action: planLine(plan.journal.prior(key), hash, plan.choice) };
}

/** The first pass: every line checked; all problems (up to a point) listed at once, nothing sent. */
async function checkAll(ctx: Context, input: Input, context: LineContext, options: { plan?: Plan; strict: boolean; progress?: Progress }): Promise<Checked> {
  const problems: string[] = [];
  const warnings: string[] = [];
  let bad = 0;
  const checked: Checked = { lines: 0, skipped: 0, changed: [], unknown: { keyed: 0, held: 0, resend: 0, done: 0, failed: 0 }, unlisted: 0 };
  let number = 0;
  options.progress?.show(() => `checking: ${number} line${number === 1 ? '' : 's'} read`);
  const keys = options.plan ? new Map<string, number>() : undefined;
  const answers = new Map<string, string | undefined>();
  // The description, for raw lines' paths; a platform that publishes none is not checked (the server still judges).
  let index: FullApiIndex | null | undefined;
  const problem = (message: string) => {
    bad++;
    if (problems.length < LISTED) problems.push(`  line ${number}: ${sanitize(message, 300)}`);
  };
  const stream = input.first();
  for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
    number++;
    if (number % LINES_PER_TURN === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      if (ctx.signal.aborted) break;
    }
    let prepared: PreparedLine | undefined;
    try {
      prepared = await prepareLine(text, context);
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      problem(error.message);
      continue;
    }
    if (!prepared) continue;
    checked.lines++;
    if (prepared.raw && context.baseUrl) {
      index ??= await context.index().catch(() => null);
      const unlisted = index ? pathProblem(index, context.baseUrl, prepared.request, answers) : undefined;
      if (unlisted) {
        checked.unlisted++;
        if (options.strict) problem(`${unlisted} (--strict)`);
        else if (warnings.length < LISTED) warnings.push(`  line ${number}: ${sanitize(unlisted, 300)}`);
      }
    }
    if (keys) {
      const key = String(prepared.id ?? number);
      const first = keys.get(key);
      if (first !== undefined) {
        problem(`its journal key ${JSON.stringify(sanitize(key, 60))} is line ${first}'s too (a journal keys each line by its id, or by its line number when it has none): give each line an id of its own`);
        continue;
      }
      keys.set(key, number);
    }
    const planned = planFor(options.plan, prepared, number);
    if (!planned) continue;
    const { action } = planned;
    if (action.kind === 'skip') {
      checked.skipped++;
      if (action.changed) checked.changed.push(String(planned.key));
    } else if (action.kind === 'hold') checked.unknown.held++;
    else if (action.kind === 'settle') {
      checked.unknown[action.as]++;
      if (action.as === 'done') checked.skipped++;
    } else if (action.unknown) checked.unknown[action.unknown]++;
  }
  if (ctx.signal.aborted) throw new InterruptedError();
  await input.copied();
  options.progress?.clear();
  if (bad > 0) {
    const more = bad > problems.length ? `\n  … and ${bad - problems.length} more` : '';
    throw new UsageError(`${bad} line${bad === 1 ? ' is' : 's are'} not a request plat batch can send; nothing was sent:\n${problems.join('\n')}${more}`);
  }
  if (checked.unlisted > 0) {
    const more = checked.unlisted > warnings.length ? `\n  … and ${checked.unlisted - warnings.length} more` : '';
    ctx.io.warn(`${checked.unlisted} line${checked.unlisted === 1 ? '' : 's'} name${checked.unlisted === 1 ? 's' : ''} what the platform's API description does not list (sent all the same; --strict refuses them):\n${warnings.join('\n')}${more}`);
  }
  if (checked.changed.length > 0) {
    ctx.io.warn(
      `${checked.changed.length} line${checked.changed.length === 1 ? '' : 's'} done in an earlier run ${checked.changed.length === 1 ? 'has' : 'have'} changed since, and ${checked.changed.length === 1 ? 'is' : 'are'} not sent again: ${idList(checked.changed, checked.changed.length)}. A new request needs an id of its own.`,
    );
  }
  return checked;
}

interface SendOptions {
  concurrency: number;
  rate?: number;
  jq?: { apply(json: string): Promise<string> | string };
  journal?: string;
  idempotencyKey?: boolean;
  ordered?: boolean;
  failFast?: boolean;
  failed?: string;
  choice?: UnknownChoice;
  plan?: Plan;
  progress?: Progress;
  started: number;
}

/** A line on its way: what --failed writes back, and its hash for the journal's "sent" record. */
interface Pending {
  id: string | number;
  text: string;
  hash?: string;
  sent?: boolean;
}

async function send(ctx: Context, client: ApiClient, input: Input, context: LineContext, checked: Checked, options: SendOptions): Promise<void> {
  const journal = options.plan?.journal;
  const failedFile = options.failed ? await openFailedFile(options.failed) : undefined;
  const pending = new Map<number, Pending>();

  async function* items(): AsyncGenerator<BatchItem> {
    let number = 0;
    for await (const text of createInterface({ input: input.open(), crlfDelay: Infinity })) {
      number++;
      const prepared = await prepareLine(text, context);
      if (!prepared) continue;
      const id = prepared.id ?? number;
      const planned = planFor(options.plan, prepared, number);
      const action: LineAction = planned?.action ?? { kind: 'send' };
      if (action.kind === 'skip') continue;
      const entry: Pending = { id, text: withId(id, prepared.canonical), hash: planned?.hash };
      const method = prepared.request.method.toUpperCase();
      if (action.kind === 'settle') {
        await journal!.done(id, { ok: action.as === 'done', status: null, settled: true });
        if (action.as === 'done') continue;
        pending.set(number, entry);
        yield settled(prepared, id, number, `failed: settled with --settle-unknown failed (line ${number} was in flight when an earlier run ended); not sent`, false);
        continue;
      }
      pending.set(number, entry);
      if (action.kind === 'hold') {
        yield settled(
          prepared,
          id,
          number,
          `unknown: line ${number} (${method}) was in flight when an earlier run ended, and is not sent again without an Idempotency-Key or your word. Check it on the platform, then run again with --settle-unknown done (it happened) or --resend-unknown (it did not).`,
          true,
        );
        continue;
      }
      const key = action.key ?? (options.idempotencyKey ? randomUUID() : undefined);
      yield { line: number, id, request: prepared.request, idempotencyKey: key };
    }
  }

  let batch: BatchRun;
  try {
    // The first write: a journal that has proved to be one (or a new file) is written only now.
    if (journal) await journal.startWriting();
    batch = await startBatch(ctx, client, items(), {
      concurrency: options.concurrency,
      ratePerSecond: options.rate,
      ordered: options.ordered,
      failFast: options.failFast,
      onStart: async (item) => {
        const entry = pending.get(item.line)!;
        entry.sent = true;
        if (journal) await journal.sent(item.id, entry.hash!, item.idempotencyKey);
      },
      onDone: async (item, result) => {
        if (result.status === null && !item.idempotencyKey) {
          // No answer to a request that may have been acted on: not "failed" (a rerun would send it again).
          result.unknown = true;
          result.error = `unknown: no answer came (${(result.error ?? 'the connection ended').replace(/\.$/, '')}), but the request may have reached the server and been acted on; a rerun with the journal sends it again only on your word (--resend-unknown)`;
          return;
        }
        await journal?.done(item.id, { ok: result.ok, status: result.status });
      },
    });
  } catch (error) {
    await failedFile?.discard();
    throw error;
  }
  const total = checked.lines - checked.skipped;
  options.progress?.show(() => {
    const { done, failed } = batch.stats;
    const elapsed = (ctx.now() - options.started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const eta = rate > 0 ? Math.round((total - done) / rate) : undefined;
    const paused = batch.governor.paused() ? ' · paused by the server' : '';
    return `${done}/${total} done · ${failed} failed${paused} · ${rate.toFixed(0)}/s${eta !== undefined ? ` · ETA ${eta} s` : ''}`;
  });
  const tally: Tally = { ok: 0, failed: [], failedCount: 0, unknown: [], unknownCount: 0 };
  const note = (list: string[], id: string | number) => list.length < LISTED && list.push(String(id));
  const toFailedFile = async (line: number) => {
    const entry = pending.get(line);
    pending.delete(line);
    if (entry && failedFile) await failedFile.write(entry.text);
  };
  try {
    for await (const result of batch.results) {
      if (result.ok) tally.ok++;
      else if (result.unknown) {
        tally.unknownCount++;
        note(tally.unknown, result.id);
      } else {
        tally.failedCount++;
        note(tally.failed, result.id);
      }
      if (result.ok) pending.delete(result.line);
      else await toFailedFile(result.line);
      const text = await render(result, options.jq);
      if (text) {
        if (ctx.io.stdoutIsTTY) options.progress?.clear();
        ctx.io.out(ctx.io.stdoutIsTTY ? escapeJsonForTerminal(text) : text);
      }
    }
  } finally {
    // Lines sent and never answered (Ctrl-C, the session ended): unknown, and the journal says so.
    for (const [line, entry] of [...pending]) {
      if (!entry.sent) continue;
      tally.unknownCount++;
      note(tally.unknown, entry.id);
      await toFailedFile(line);
    }
    options.progress?.stop();
    await failedFile?.finish();
  }
  summarise(ctx, checked, tally, options, batch.governor.pauses);
  const where = options.journal ? ` The journal ${options.journal} records where it stopped; run the same command again to go on.` : '';
  if (ctx.signal.aborted) {
    // main.ts says "Interrupted." itself; where to go on from is this command's to say.
    if (where) ctx.io.note(where.trim());
    throw new InterruptedError();
  }
  if (batch.sessionEnded) throw new AuthError(`${batch.sessionEnded.message}${where}`);
  if (batch.stoppedEarly) throw new PlatError(`Stopped at the first failure (--fail-fast).${where}`);
  if (tally.failedCount > 0 || tally.unknownCount > 0) throw new ExitStatus(1);
}

function settled(prepared: PreparedLine, id: string | number, line: number, error: string, unknown: boolean): BatchItem {
  return { line, id, request: prepared.request, settled: { id, line, status: null, ok: false, error, ...(unknown ? { unknown: true } : {}) } };
}

async function render(result: BatchResult, jq: SendOptions['jq']): Promise<string> {
  const shape: Record<string, unknown> = { id: result.id, line: result.line, status: result.status, ok: result.ok };
  if (result.error !== undefined) shape.error = result.error;
  else if (result.body !== undefined) shape.body = result.body;
  const json = JSON.stringify(shape);
  return jq ? await jq.apply(json) : `${json}\n`;
}

function parseRate(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(value.trim());
  const n = match ? Number(match[1]) : NaN;
  if (!(n > 0) || n > 100_000) throw new UsageError(`--rate expects requests per second, such as 10/s or 2.5 (got "${value}").`);
  return n;
}
