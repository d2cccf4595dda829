import { describe, expect, it } from 'vitest';
import { backoff, MAX_RETRY_AFTER_MS, retryDelay } from '../../../src/session/request.js';

describe('retry timing (session/request.ts)', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');

  it('Retry-After in seconds or as an HTTP date, never negative', () => {
    expect(retryDelay('3', 0, now)).toBe(3000);
    expect(retryDelay(' 0 ', 0, now)).toBe(0);
    expect(retryDelay('Mon, 23 Nov 2026 12:00:05 GMT', 0, now)).toBe(5000);
    expect(retryDelay('Mon, 23 Nov 2026 11:59:00 GMT', 0, now)).toBe(0);
  });

  it('a server asking for longer than the bound gets its answer back instead of a wait', () => {
    expect(retryDelay(String(MAX_RETRY_AFTER_MS / 1000), 0, now)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryDelay(String(MAX_RETRY_AFTER_MS / 1000 + 1), 0, now)).toBeUndefined();
    expect(retryDelay('Mon, 23 Nov 2026 13:00:00 GMT', 0, now)).toBeUndefined();
  });

  it('without a usable Retry-After: exponential backoff with up to 50 % jitter, capped at 8 s', () => {
    expect(retryDelay(undefined, 0, now)).toBeGreaterThanOrEqual(500);
    expect(retryDelay('soon', 1, now)).toBeGreaterThanOrEqual(1000);
    expect([0, 1, 2, 3, 4, 10].map((n) => backoff(n, () => 0))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect([0, 1, 10].map((n) => backoff(n, () => 1))).toEqual([750, 1500, 12000]);
  });
});
