import { describe, expect, it } from 'vitest';
import { ExitCode, UsageError } from '../../../src/errors.js';
import { closestWords, editDistance } from '../../../src/terminal/text.js';
import {
  DEFAULT_SCOPES,
  checkScopesSupported,
  formatScopes,
  parseScopeArgs,
  scopesForPlan,
  scopesToRegister,
  scopesToRequest,
} from '../../../src/oauth/scopes.js';

const SUPPORTED = ['openid', 'profile', 'email', 'courses:read', 'courses:write', 'students:read', 'analytics:read', 'orders:read'];

describe('parseScopeArgs', () => {
  it('splits repeated values on spaces and commas and drops duplicates, keeping first-seen order', () => {
    expect(parseScopeArgs(['courses:read', 'students:read,orders:read', 'openid  profile', 'courses:read'])).toEqual([
      'courses:read',
      'students:read',
      'orders:read',
      'openid',
      'profile',
    ]);
  });

  it('ignores empty pieces, tabs and stray separators', () => {
    expect(parseScopeArgs([' , ', '\tcourses:read,,\n', ''])).toEqual(['courses:read']);
    expect(parseScopeArgs(undefined)).toEqual([]);
  });

});

describe('scopesToRequest', () => {
  it('uses openid profile email when nothing was named', () => {
    expect(scopesToRequest([], [], undefined)).toEqual(['openid', 'profile', 'email']);
    expect(DEFAULT_SCOPES).toEqual(['openid', 'profile', 'email']);
  });

  it('--scope adds to openid profile email (as gh --scopes adds to its minimum), openid first', () => {
    expect(scopesToRequest(['courses:read'], [], undefined)).toEqual(['openid', 'profile', 'email', 'courses:read']);
    expect(scopesToRequest(['courses:read', 'openid'], [], undefined)).toEqual(['openid', 'profile', 'email', 'courses:read']);
  });

  it('asks for the defaults the server lists only, when it lists any', () => {
    expect(scopesToRequest(['courses:read'], [], undefined, ['openid', 'email', 'courses:read'])).toEqual(['openid', 'email', 'courses:read']);
    expect(scopesToRequest([], [], undefined, [])).toEqual(['openid', 'profile', 'email']);
  });

  it('a plain OAuth 2.x server that lists no identity scope is asked for none of them, openid included', () => {
    const plain = ['courses:read', 'courses:write'];
    expect(scopesToRequest([], [], undefined, plain)).toEqual([]);
    expect(scopesToRequest(['courses:read'], [], undefined, plain)).toEqual(['courses:read']);
    expect(scopesToRequest([], ['courses:write'], ['courses:read'], plain)).toEqual(['courses:read', 'courses:write']);
    expect(scopesForPlan(['courses:read'], [], [], undefined, plain)).toEqual(['courses:read']);
    expect(scopesToRegister(['courses:read'], plain)).toEqual(['courses:read']);
  });

  it('openid is still asked for where the server lists it (or lists nothing), for --for plans too', () => {
    expect(scopesForPlan(['courses:read'], [], [], undefined, SUPPORTED)).toEqual(['openid', 'courses:read']);
    expect(scopesForPlan(['courses:read'], [], [], undefined, undefined)).toEqual(['openid', 'courses:read']);
    expect(scopesToRequest([], [], undefined, ['openid', 'courses:read'])).toEqual(['openid']);
  });

  it('step-up: keeps the granted scopes and adds the new ones, without duplicates', () => {
    expect(scopesToRequest([], ['analytics:read', 'courses:read'], ['openid', 'courses:read'])).toEqual([
      'openid',
      'courses:read',
      'analytics:read',
    ]);
  });

  it('step-up without a previous grant starts from the defaults', () => {
    expect(scopesToRequest([], ['analytics:read'], undefined)).toEqual(['openid', 'profile', 'email', 'analytics:read']);
  });

  it('step-up also includes explicitly requested scopes, and openid when the grant lacked it', () => {
    expect(scopesToRequest(['orders:read'], ['analytics:read'], ['courses:read'])).toEqual([
      'openid',
      'courses:read',
      'orders:read',
      'analytics:read',
    ]);
  });
});

describe('checkScopesSupported', () => {
  it('accepts scopes the server lists, and anything when it lists none', () => {
    expect(() => checkScopesSupported(['openid', 'courses:read'], SUPPORTED)).not.toThrow();
    expect(() => checkScopesSupported(['whatever:thing'], undefined)).not.toThrow();
    expect(() => checkScopesSupported(['whatever:thing'], [])).not.toThrow();
  });

  it('refuses an unknown scope as a usage error that names close matches', () => {
    let error: unknown;
    try {
      checkScopesSupported(['openid', 'courses:raed'], SUPPORTED);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(ExitCode.usage);
    expect((error as Error).message).toContain('"courses:raed"');
    expect((error as Error).message).toContain('did you mean "courses:read"');
    expect((error as Error).message).not.toContain('"openid"');
  });

  it('names every unknown scope, in the plural, and omits the hint when nothing is close', () => {
    expect(() => checkScopesSupported(['zzzzzzzzzz', 'studnets:read'], SUPPORTED)).toThrow(
      /scopes "zzzzzzzzzz", "studnets:read" \(did you mean "students:read"\?\)/,
    );
  });
});

describe("a scope the server does not offer, by plat's one closest-match rule (terminal/text.ts closestWords)", () => {
  it('ranks by edit distance, caps the list, and finds nothing for a distant word', () => {
    expect(closestWords('courses:raed', SUPPORTED)).toEqual(['courses:read', 'courses:write']);
    expect(closestWords('courses', SUPPORTED, 1)).toEqual(['courses:read']);
    expect(closestWords('qqqqqqqq', SUPPORTED)).toEqual([]);
    expect(() => checkScopesSupported(['courses:raed'], SUPPORTED)).toThrow(/"courses:raed" \(did you mean "courses:read" or "courses:write"\?\)/);
  });

  it('finds a scope from its resource and ignores case', () => {
    expect(closestWords('analytics', SUPPORTED)).toContain('analytics:read');
    expect(closestWords('ORDERS:READ', SUPPORTED)[0]).toBe('orders:read');
  });
});

describe('editDistance', () => {
  it('computes Levenshtein distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
    expect(editDistance('read', 'raed')).toBe(2);
    expect(editDistance('courses:read', 'course:write')).toBe(editDistance('course:write', 'courses:read'));
  });
});

describe('formatScopes', () => {
  it('joins with spaces, or says (none)', () => {
    expect(formatScopes(['openid', 'email'])).toBe('openid email');
    expect(formatScopes([])).toBe('(none)');
  });
});
