/** The one abortable wait (src/sleep.ts): retries, the batch governor, the device flow and the lock wait on it. */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sleep } from '../../src/sleep.js';

describe('sleep', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('resolves true when the time runs out, and leaves no abort listener behind', async () => {
    const controller = new AbortController();
    const waits = Array.from({ length: 10 }, () => sleep(1000, controller.signal));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await Promise.all(waits)).toEqual(Array(10).fill(true));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('an abort ends the wait at once: false, and no timer left', async () => {
    const controller = new AbortController();
    const wait = sleep(60_000, controller.signal);
    controller.abort();
    expect(await wait).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a signal aborted already: false at once, no timer started', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await sleep(60_000, controller.signal)).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('without a signal it just waits', async () => {
    const wait = sleep(500);
    await vi.advanceTimersByTimeAsync(500);
    expect(await wait).toBe(true);
  });
});
