import type { StoredSession } from './types.js';

/**
 * Whether a value read back from a store has the shape of a StoredSession. Stores check this so that a damaged or
 * foreign entry is reported as such instead of surfacing later as `undefined` tokens.
 */
export function isStoredSession(value: unknown): value is StoredSession {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.accessToken === 'string' &&
    typeof v.tokenType === 'string' &&
    typeof v.obtainedAt === 'number' &&
    Array.isArray(v.scopes) &&
    v.scopes.every((scope) => typeof scope === 'string') &&
    optional(v.refreshToken, 'string') &&
    optional(v.idToken, 'string') &&
    optional(v.clientSecret, 'string') &&
    optional(v.expiresAt, 'number')
  );
}

function optional(value: unknown, type: 'string' | 'number'): boolean {
  return value === undefined || typeof value === type;
}
