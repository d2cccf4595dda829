import { randomInt } from 'node:crypto';
import lockfile from 'proper-lockfile';
import { ExitCode, InterruptedError, PlatError } from '../errors.js';
import { sleep } from '../sleep.js';
import { ensurePrivateDir, storageError } from './atomic.js';
import { lockTargetPath, locksDir } from './paths.js';

export interface ProfileLockOptions {
  /** How long to wait for another process to release the lock. Default 30 s. */
  timeoutMs?: number;
  /**
   * A lock whose directory has not been touched for this long is taken over: its holder died without releasing it
   * (SIGKILL, power loss). The holder touches it every `staleMs / 2`. Default 10 s; proper-lockfile's floor is 2 s.
   */
  staleMs?: number;
  /** Ends a wait for a lock another process holds (Ctrl-C) with an InterruptedError; a free lock is still taken. */
  signal?: AbortSignal;
}

const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
const DEFAULT_LOCK_STALE_MS = 10_000;

const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 250;

/**
 * Runs `fn` while holding the profile's cross-process lock (`locks/<profile>.lock`, a directory created atomically
 * by proper-lockfile), so that parallel plat processes refresh a session one at a time. Waits up to `timeoutMs`
 * for the lock.
 *
 * If the lock is lost while `fn` runs (its directory was removed or taken over as stale, e.g. after the machine
 * slept), `fn`'s signal is aborted and the result is a PlatError once `fn` settles, never an unhandled throw.
 */
export async function withProfileLock<T>(
  configDir: string,
  profile: string,
  fn: (signal: AbortSignal) => Promise<T>,
  options: ProfileLockOptions = {},
): Promise<T> {
  const target = lockTargetPath(configDir, profile);
  const lockPath = `${target}.lock`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;

  await ensurePrivateDir(configDir);
  await ensurePrivateDir(locksDir(configDir));

  const lost = new AbortController();
  const release = await acquire(target, lockPath, profile, timeoutMs, options.signal, {
    realpath: false,
    stale: staleMs,
    update: staleMs / 2,
    retries: 0,
    onCompromised: (error: Error) => lost.abort(error),
  });

  let result: T;
  try {
    result = await fn(lost.signal);
  } finally {
    // Released even when fn failed; a lock already lost cannot be released and is not another error.
    await release().catch(() => undefined);
  }
  if (lost.signal.aborted) throw lockLostError(profile, lockPath, lost.signal.reason);
  return result;
}

async function acquire(
  target: string,
  lockPath: string,
  profile: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  lockOptions: lockfile.LockOptions,
): Promise<() => Promise<void>> {
  const deadline = Date.now() + timeoutMs;
  let delay = FIRST_RETRY_MS;
  for (;;) {
    try {
      return await lockfile.lock(target, lockOptions);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw storageError(lockPath, error, 'create the lock');
    }
    // Ctrl-C ends a wait for another process, not the taking of a free lock (cleanup after Ctrl-C needs that).
    if (signal?.aborted) throw new InterruptedError();
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new PlatError(
        `Another plat process is holding the lock for profile ${profile} (${lockPath}); try again, ` +
          'or delete the lock if no plat is running.',
        ExitCode.failure,
      );
    }
    // Jittered exponential backoff: waiters that started together do not retry in lockstep.
    const wait = Math.min(remaining, delay + randomInt(0, delay + 1));
    await sleep(wait, signal);
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
}

function lockLostError(profile: string, lockPath: string, reason: unknown): PlatError {
  const why = reason instanceof Error ? reason.message : String(reason);
  return new PlatError(
    `plat lost the lock for profile ${profile} (${lockPath}) while using it (${why}); ` +
      'another plat process may have taken it over. Try again.',
    ExitCode.failure,
    { cause: reason },
  );
}
