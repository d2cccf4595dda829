/**
 * The one wait that an abort ends early, for every pause plat takes between attempts: a retry's backoff
 * (session/request.ts), the governor's pauses and slots (plat batch, plat mcp), the device flow's polling interval, and the backoff
 * while another plat holds a profile's lock (store/lock.ts).
 */

/**
 * Resolves after `ms`, or as soon as `signal` aborts (at once when it already has): true when the time ran out,
 * false when the wait was cut short. The abort listener goes when the timer fires, so ten retries leave none behind.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
