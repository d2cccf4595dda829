/**
 * The batch engine's front door: what plat batch and the library's client.batch() use of it. The engine sits above
 * the session (it sends through the session's ApiClient), so the session knows nothing of it; the commands and the
 * library come in here. Like the session's door it loads what it runs with import() (the engine, the journal), so
 * a command or a library client that never sends a batch never initialises them.
 */
import type { Context } from '../context.js';
import type { ApiClient } from '../session/index.js';
// Types only, erased from the bundles: the shapes below are the engine's own, named here for the callers.
import type * as Engine from './engine.js';
import type * as Journals from './journal.js';
import type * as Governors from './governor.js';

/** One request of a batch, with its line and id (and a result already settled, for a line not to send). */
export type BatchItem = Engine.BatchItem;
/** One line's outcome: its status and body, or the error. */
export type BatchResult = Engine.BatchResult;
/** A batch under way: its results as they complete, its governor and counts, how it ended. */
export type BatchRun = Engine.BatchRun;
/** `plat batch --journal`'s record of which lines were sent and answered. */
export type Journal = Journals.Journal;
/** What a journal recorded for one line: its hash, whether its outcome is known, its Idempotency-Key. */
export type JournalRecord = Journals.JournalRecord;

/** `plat batch` and the library's `batch()`: items sent N at a time through the client, one governor for all. */
export async function startBatch(
  ctx: Context,
  client: ApiClient,
  items: AsyncIterable<BatchItem> | Iterable<BatchItem>,
  options: Engine.BatchOptions,
): Promise<BatchRun> {
  const { runBatch } = await import('./engine.js');
  return runBatch(ctx, client, items, options);
}

/**
 * `plat batch --journal`: the journal of earlier runs, checked (never a link; its header names this platform and
 * profile, as the session's requestsOf says them; every record well-formed) before anything is sent, and the line
 * fingerprint it records. Nothing is written to it before startWriting().
 */
export async function openBatchJournal(file: string, binding: Journals.JournalBinding): Promise<{ journal: Journal; lineHash: (text: string) => string }> {
  const { lineHash, openJournal } = await import('./journal.js');
  return { journal: await openJournal(file, binding), lineHash };
}

/**
 * One pace for many requests: plat batch's governor (governor.ts), not a second one. A server's 429/503 pauses them
 * all, and at most `maxInFlight` callers hold a place at once, the rest waiting in order. A request goes under it
 * with `{ governor, retries }`. plat mcp governs its tool calls with it.
 */
export async function governRequests(ctx: Context, options: Omit<Governors.GovernorOptions, 'now' | 'signal'>): Promise<{ governor: Governors.Governor; retries: number }> {
  const { createGovernor, GOVERNED_RETRIES } = await import('./governor.js');
  return { governor: createGovernor({ ...options, signal: ctx.signal, now: () => ctx.now() }), retries: GOVERNED_RETRIES };
}
