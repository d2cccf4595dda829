import type { StoredSession } from '../../src/store/types.js';

/** A plausible session; tokens are random-looking so that a leak into a message is easy to detect. */
export function sampleSession(overrides: Partial<StoredSession> = {}): StoredSession {
  const now = Date.now();
  return {
    accessToken: `at-${Math.random().toString(36).slice(2)}-secret`,
    refreshToken: `rt-${Math.random().toString(36).slice(2)}-secret`,
    idToken: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c2VyLTEifQ.',
    tokenType: 'Bearer',
    expiresAt: now + 3_600_000,
    obtainedAt: now,
    scopes: ['openid', 'profile', 'email'],
    ...overrides,
  };
}
