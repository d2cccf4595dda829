/**
 * What plat batch does with one line, given what the journal recorded for it: the rule that keeps a rerun from
 * sending anything twice without an Idempotency-Key or the person's explicit word, while letting failed lines be
 * fixed and sent again. The same answer in the check pass (counted and reported before anything is sent) and in
 * the sending pass.
 */
import type { JournalRecord } from '../../batch/index.js';

/** --resend-unknown, --settle-unknown done|failed: the person's word on lines whose fate is unknown. */
export type UnknownChoice = 'resend' | 'done' | 'failed';

export type LineAction =
  /** Sent; `key` reuses the Idempotency-Key recorded for the same text; `unknown` says why an unknown line may go. */
  | { kind: 'send'; key?: string; unknown?: 'keyed' | 'resend' }
  /** Done in an earlier run: not sent, whatever its text now (`changed`: its text is not the text that was sent). */
  | { kind: 'skip'; changed: boolean }
  /** In flight when a run ended, and no safe way to send it again: held until the person says. */
  | { kind: 'hold' }
  /** In flight when a run ended; the person said it happened (done) or did not (failed): recorded, not sent. */
  | { kind: 'settle'; as: 'done' | 'failed' };

export function planLine(prior: JournalRecord | undefined, hash: string, choice: UnknownChoice | undefined): LineAction {
  if (!prior) return { kind: 'send' };
  if (!prior.inFlight) {
    if (prior.ok) return { kind: 'skip', changed: prior.hash !== hash };
    // Failed: the server answered and did not act, so it may go again; the same text keeps its key.
    return { kind: 'send', key: prior.hash === hash ? prior.key : undefined };
  }
  // In flight when a run ended: it may have reached the server and acted. Whatever its method, it goes again only
  // with its recorded Idempotency-Key or on the person's word (a DELETE sent twice reads as a 404 the second time).
  if (prior.hash === hash && prior.key) return { kind: 'send', key: prior.key, unknown: 'keyed' };
  if (choice === 'resend') return { kind: 'send', unknown: 'resend' };
  if (choice === 'done' || choice === 'failed') return { kind: 'settle', as: choice };
  return { kind: 'hold' };
}
