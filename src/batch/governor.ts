/**
 * plat batch's one pace for every worker: a 429/503 with Retry-After pauses all of them until the server's time is
 * up (not only the worker that was told), and `--rate R/s` spaces the attempts evenly. request.ts awaits turn()
 * before every attempt, retries included, so nothing goes out during a pause.
 */
import type { RequestGovernor } from '../session/request.js';
import { sleep } from '../sleep.js';

export interface Governor extends RequestGovernor {
  /** true while a pause is in force (for the progress line). */
  paused(): boolean;
  /** How many pauses servers asked for. */
  readonly pauses: number;
}

export function createGovernor(options: { ratePerSecond?: number; now?: () => number; signal?: AbortSignal }): Governor {
  const now = options.now ?? Date.now;
  const interval = options.ratePerSecond ? 1000 / options.ratePerSecond : 0;
  let pausedUntil = 0;
  let nextSlot = 0;
  let pauses = 0;
  const wait = (ms: number) => sleep(ms, options.signal);
  return {
    async turn() {
      for (;;) {
        if (options.signal?.aborted) return;
        const t = now();
        if (t < pausedUntil) {
          await wait(pausedUntil - t);
          continue;
        }
        if (!interval) return;
        // A slot is taken before waiting for it, so parallel callers line up one interval apart.
        const slot = Math.max(t, nextSlot);
        nextSlot = slot + interval;
        if (slot > t) await wait(slot - t);
        // A pause that began while this attempt waited for its slot still holds it back.
        if (now() < pausedUntil) continue;
        return;
      }
    },
    pause(ms: number) {
      const until = now() + ms;
      if (until > pausedUntil) {
        if (now() >= pausedUntil) pauses++;
        pausedUntil = until;
      }
    },
    paused: () => now() < pausedUntil,
    get pauses() {
      return pauses;
    },
  };
}
