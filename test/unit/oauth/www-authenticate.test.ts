import { describe, expect, it } from 'vitest';
import { parseBearerChallenge } from '../../../src/oauth/www-authenticate.js';

describe('parseBearerChallenge', () => {
  it('returns undefined for a missing or empty header, or one without a Bearer challenge', () => {
    expect(parseBearerChallenge(undefined)).toBeUndefined();
    expect(parseBearerChallenge(null)).toBeUndefined();
    expect(parseBearerChallenge('')).toBeUndefined();
    expect(parseBearerChallenge('Basic realm="school"')).toBeUndefined();
    expect(parseBearerChallenge('NotBearer error="invalid_token"')).toBeUndefined();
    expect(parseBearerChallenge('Bearerx error="invalid_token"')).toBeUndefined();
  });

  it('reads quoted values, including resource_metadata', () => {
    expect(
      parseBearerChallenge(
        'Bearer error="insufficient_scope", scope="courses:write analytics:read", resource_metadata="https://api.example/.well-known/oauth-protected-resource"',
      ),
    ).toEqual({
      error: 'insufficient_scope',
      errorDescription: undefined,
      scope: 'courses:write analytics:read',
      resourceMetadata: 'https://api.example/.well-known/oauth-protected-resource',
    });
  });

  it('unescapes backslash-escaped quotes and keeps commas inside quotes', () => {
    const c = parseBearerChallenge('Bearer error="invalid_token", error_description="the \\"token\\" expired, sorry"');
    expect(c?.error).toBe('invalid_token');
    expect(c?.errorDescription).toBe('the "token" expired, sorry');
  });

  it('reads unquoted token values and is case-insensitive about the scheme and names', () => {
    const c = parseBearerChallenge('bearer ERROR=invalid_token, Scope=courses:read');
    expect(c).toMatchObject({ error: 'invalid_token', scope: 'courses:read' });
  });

  it('finds Bearer after another scheme', () => {
    const c = parseBearerChallenge('Basic realm="school", Bearer error="invalid_token", scope="courses:read"');
    expect(c).toMatchObject({ error: 'invalid_token', scope: 'courses:read' });
  });

  it('stops at a scheme that follows Bearer, so its parameters are not taken as Bearer ones', () => {
    const c = parseBearerChallenge('Bearer realm="api", scope="courses:read", Basic realm="x", error="from_basic"');
    expect(c?.scope).toBe('courses:read');
    expect(c?.error).toBeUndefined();
  });

  it('returns an empty challenge for a bare Bearer', () => {
    expect(parseBearerChallenge('Bearer')).toEqual({
      error: undefined,
      errorDescription: undefined,
      scope: undefined,
      resourceMetadata: undefined,
    });
  });
});
