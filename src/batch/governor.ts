/**
 * The one pace for the requests that share it: plat batch's workers, and every tool call of one plat mcp server.
 * - A 429/503 with Retry-After pauses all of them until the server's time is up (not only the request that was
 *   told): request.ts awaits turn() before every attempt, retries included, so nothing goes out during a pause.
 * - `--rate R/s` spaces the attempts evenly.
 * - `maxInFlight` bounds how many callers hold a place at once (admit): the rest wait in order, first come first
 *   served, and one whose signal aborts (an MCP client's cancel) leaves the queue at once. plat mcp takes a place
 *   per tool call, so an agent that sends 300 calls at once has at most that many requests at the platform.
 */
import type { RequestGovernor } from '../session/request.js';
import { sleep } from '../sleep.js';

export interface Governor extends RequestGovernor {
  /** true while a pause is in force (for the progress line). */
  paused(): boolean;
  /** How many pauses servers asked for. */
  readonly pauses: number;
  /**
   * A place among the `maxInFlight`: resolves with its release (call it once done; a second call does nothing),
   * after every earlier caller got theirs. Rejects with the signal's reason once it aborts, leaving the queue then.
   */
  admit(signal?: AbortSignal): Promise<() => void>;
  /** Callers waiting for a place. */
  readonly waiting: number;
}

export interface GovernorOptions {
  ratePerSecond?: number;
  /** How many may hold a place at once (admit); unbounded by default. */
  maxInFlight?: number;
  now?: () => number;
  /** Ends every wait (Ctrl-C). */
  signal?: AbortSignal;
  /** A new pause began: the server asked for `ms` (its answer's status). For a log line. */
  onPause?(ms: number, status: number | undefined): void;
  /** The queue for a place grew or shrank (`waiting` callers now). For a log line. */
  onQueue?(waiting: number): void;
}

/** Each request's retries under a governor (a server's pauses included) before its answer is taken as the result. */
export const GOVERNED_RETRIES = 4;

export function createGovernor(options: GovernorOptions): Governor {
  const now = options.now ?? Date.now;
  const interval = options.ratePerSecond ? 1000 / options.ratePerSecond : 0;
  const max = options.maxInFlight ?? Infinity;
  let pausedUntil = 0;
  let nextSlot = 0;
  let pauses = 0;
  let holding = 0;
  // In arrival order (a Set keeps it), and one that leaves is removed at once, wherever it stands.
  const queue = new Set<() => void>();
  const wait = (ms: number, signal?: AbortSignal) => sleep(ms, signal && options.signal ? AbortSignal.any([options.signal, signal]) : (signal ?? options.signal));
  const release = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      holding--;
      let moved = false;
      while (holding < max && queue.size > 0) {
        const next = queue.values().next().value!;
        queue.delete(next);
        next();
        moved = true;
      }
      if (moved) options.onQueue?.(queue.size);
    };
  };
  return {
    async turn(signal?: AbortSignal) {
      for (;;) {
        if (options.signal?.aborted || signal?.aborted) return;
        const t = now();
        if (t < pausedUntil) {
          await wait(pausedUntil - t, signal);
          continue;
        }
        if (!interval) return;
        // A slot is taken before waiting for it, so parallel callers line up one interval apart.
        const slot = Math.max(t, nextSlot);
        nextSlot = slot + interval;
        if (slot > t) await wait(slot - t, signal);
        // A pause that began while this attempt waited for its slot still holds it back.
        if (now() < pausedUntil) continue;
        return;
      }
    },
    pause(ms: number, status?: number) {
      const until = now() + ms;
      if (until > pausedUntil) {
        const fresh = now() >= pausedUntil;
        if (fresh) pauses++;
        pausedUntil = until;
        if (fresh) options.onPause?.(ms, status);
      }
    },
    paused: () => now() < pausedUntil,
    get pauses() {
      return pauses;
    },
    admit(signal?: AbortSignal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (holding < max && queue.size === 0) {
        holding++;
        return Promise.resolve(release());
      }
      return new Promise<() => void>((resolve, reject) => {
        const granted = () => {
          signal?.removeEventListener('abort', left);
          holding++;
          resolve(release());
        };
        const left = () => {
          if (!queue.delete(granted)) return;
          options.onQueue?.(queue.size);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', left, { once: true });
        queue.add(granted);
        options.onQueue?.(queue.size);
      });
    },
    get waiting() {
      return queue.size;
    },
  };
}
