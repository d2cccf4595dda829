/**
 * What a plat batch run says and writes back for a person to act on: the check pass's summary, the run's summary
 * (counts that add up to the lines, the ids that failed and are unknown, what each unknown-line choice covered) and
 * --failed's file of the lines to fix and rerun.
 */
import { constants, promises as fs } from 'node:fs';
import type { Context } from '../../context.js';
import { PlatError, UsageError } from '../../errors.js';
import { sanitize } from '../../terminal/text.js';

/** Ids listed in a summary before the rest are counted. */
export const LISTED = 20;

export interface Checked {
  /** Request lines (blank lines are not counted). */
  lines: number;
  /** Done in an earlier run (or settled done now): not sent. */
  skipped: number;
  /** Of those, lines whose text changed since it was sent: their ids. */
  changed: string[];
  /** In flight when a run ended: sent again with their key, held, sent on the person's word, settled. */
  unknown: { keyed: number; held: number; resend: number; done: number; failed: number };
  /** Raw lines the API description does not list. */
  unlisted: number;
}

/** Lines sent this run, by outcome, with the first ids of each. */
export interface Tally {
  ok: number;
  failed: string[];
  failedCount: number;
  unknown: string[];
  unknownCount: number;
}

export function checkSummary(checked: Checked): string {
  const lines = `${checked.lines} request${checked.lines === 1 ? '' : 's'} checked: every line is well-formed`;
  const { keyed, held, resend, done, failed } = checked.unknown;
  const parts: string[] = [];
  if (checked.skipped - done > 0) parts.push(`${checked.skipped - done} done in an earlier run (skipped)`);
  if (keyed + resend > 0) parts.push(`${keyed + resend} unknown to send again`);
  if (held > 0) parts.push(`${held} unknown held (--resend-unknown or --settle-unknown decides)`);
  if (done + failed > 0) parts.push(`${done + failed} unknown to settle`);
  return parts.length > 0 ? `${lines}; the journal: ${parts.join(', ')}.` : `${lines}.`;
}

/** The line as --failed writes it back: its id made explicit, so a rerun of that file meets the same journal records. */
export function withId(id: string | number, canonical: string): string {
  return `{"id":${JSON.stringify(id)},${canonical.slice(1)}\n`;
}

export function summarise(
  ctx: Context,
  checked: Checked,
  tally: Tally,
  options: { started: number; failed?: string; journal?: string },
  pauses: number,
): void {
  const seconds = (ctx.now() - options.started) / 1000;
  const parts = [`${tally.ok} succeeded`, `${tally.failedCount} failed`];
  if (tally.unknownCount) parts.push(`${tally.unknownCount} unknown`);
  if (checked.skipped) parts.push(`${checked.skipped} skipped (done in an earlier run)`);
  const notSent = checked.lines - tally.ok - tally.failedCount - tally.unknownCount - checked.skipped;
  if (notSent > 0) parts.push(`${notSent} not sent`);
  if (pauses) parts.push(`${pauses} pause${pauses === 1 ? '' : 's'} asked by the server`);
  const sent = tally.ok + tally.failedCount;
  const pace = seconds > 0 && sent > 0 ? `, ${Math.round(sent / seconds)}/s` : '';
  const lines = [`plat batch: ${checked.lines} line${checked.lines === 1 ? '' : 's'}: ${parts.join(', ')} in ${seconds.toFixed(1)} s${pace}.`];
  const { keyed, resend, done, failed } = checked.unknown;
  if (keyed) lines.push(`${keyed} unknown line${keyed === 1 ? ' was' : 's were'} sent again with ${keyed === 1 ? 'its' : 'their'} recorded Idempotency-Key.`);
  if (resend) lines.push(`${resend} unknown line${resend === 1 ? ' was' : 's were'} sent again, as --resend-unknown asked.`);
  if (done) lines.push(`${done} unknown line${done === 1 ? ' was' : 's were'} settled as done (--settle-unknown done): recorded, not sent.`);
  if (failed) lines.push(`${failed} unknown line${failed === 1 ? ' was' : 's were'} settled as failed (--settle-unknown failed): recorded, not sent.`);
  if (tally.failedCount) lines.push(`Failed: ${idList(tally.failed, tally.failedCount)}.`);
  if (tally.unknownCount) lines.push(`Unknown: ${idList(tally.unknown, tally.unknownCount)}.`);
  if (options.failed && (tally.failedCount || tally.unknownCount)) {
    lines.push(`${options.failed} holds ${tally.failedCount + tally.unknownCount === 1 ? 'that line' : 'those lines'}: fix them and run plat batch ${options.failed}${options.journal ? ` --journal ${options.journal}` : ''}.`);
  }
  ctx.io.note(lines.join('\n'));
}

export function idList(ids: string[], count: number): string {
  const shown = ids.map((id) => sanitize(id, 60)).join(', ');
  return count > ids.length ? `${shown} and ${count - ids.length} more` : shown;
}

/**
 * --failed FILE: the failed and unknown lines, written as they come to a temporary file beside it and moved into
 * place at the end, so the file named is never half-written. Opened before anything is sent.
 */
export async function openFailedFile(file: string) {
  const temporary = `${file}.${process.pid}.tmp`;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    throw new UsageError(`Cannot write --failed ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  const cannot = (error: unknown) => new PlatError(`Cannot write --failed ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  return {
    async write(text: string) {
      try {
        await handle.write(text);
      } catch (error) {
        throw cannot(error);
      }
    },
    /** The run never started: no file named, and no temporary one left. */
    async discard() {
      await handle.close().catch(() => {});
      await fs.rm(temporary, { force: true });
    },
    async finish() {
      try {
        await handle.close();
        await fs.rename(temporary, file);
      } catch (error) {
        await fs.rm(temporary, { force: true });
        throw cannot(error);
      }
    },
  };
}
