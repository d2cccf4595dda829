import { describe, expect, it } from 'vitest';
import { needsRefresh } from '../../../../src/session/tokens/refresh.js';
import type { StoredSession } from '../../../../src/store/types.js';

const T0 = 1_700_000_000_000;
const session = (obtainedAt: number, expiresAt: number | undefined): StoredSession => ({
  accessToken: 'at',
  tokenType: 'Bearer',
  obtainedAt,
  expiresAt,
  scopes: ['openid'],
});

describe('needsRefresh', () => {
  it('never refreshes a token without an expiry', () => {
    expect(needsRefresh(session(T0, undefined), T0)).toBe(false);
    expect(needsRefresh(session(T0, undefined), T0 + 10 * 365 * 86_400_000)).toBe(false);
  });

  it('uses a 60 s margin for long-lived tokens, refreshing exactly at the margin', () => {
    const s = session(T0, T0 + 3_600_000);
    expect(needsRefresh(s, T0)).toBe(false);
    expect(needsRefresh(s, T0 + 3_600_000 - 60_001)).toBe(false);
    expect(needsRefresh(s, T0 + 3_600_000 - 60_000)).toBe(true);
    expect(needsRefresh(s, T0 + 3_600_000 - 1)).toBe(true);
  });

  it('uses half the lifetime as the margin when that is shorter than 60 s', () => {
    const s = session(T0, T0 + 40_000); // margin 20 s
    expect(needsRefresh(s, T0 + 19_999)).toBe(false);
    expect(needsRefresh(s, T0 + 20_000)).toBe(true);
    // at 120 s lifetime both rules give 60 s
    const even = session(T0, T0 + 120_000);
    expect(needsRefresh(even, T0 + 59_999)).toBe(false);
    expect(needsRefresh(even, T0 + 60_000)).toBe(true);
  });

  it('always refreshes an expired token', () => {
    expect(needsRefresh(session(T0, T0 + 3_600_000), T0 + 3_600_000 + 1)).toBe(true);
    expect(needsRefresh(session(T0, T0 + 1000), T0 + 86_400_000)).toBe(true);
  });

  it('treats an expiry before the obtained time as zero lifetime (refresh only once expired)', () => {
    const s = session(T0, T0 - 5_000);
    expect(needsRefresh(s, T0 - 5_001)).toBe(false);
    expect(needsRefresh(s, T0 - 5_000)).toBe(true);
  });
});
