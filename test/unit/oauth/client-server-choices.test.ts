/**
 * The choices plat makes from a server's metadata (issue 11), for the metadata shapes the interop servers do not
 * cover: lists that are absent or empty, a revocation list absent beside a token list, a secret that needs
 * encoding. The journeys in test/interop/ show the same choices against real servers.
 */
import type { AuthorizationServer } from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { clientAuth, mayRevoke, secretMethod } from '../../../src/oauth/client.js';
import { scopesToRegister, withOfflineAccess } from '../../../src/oauth/scopes.js';
import type { ClientRegistration } from '../../../src/store/types.js';
import { clockTime } from '../../../src/session/tokens/no-refresh-token.js';

const as = (metadata: Record<string, unknown> = {}) => ({ issuer: 'https://as.example.test', ...metadata }) as AuthorizationServer;
const registration = (authMethod: ClientRegistration['authMethod']): ClientRegistration => ({
  clientId: 'plat-client',
  authMethod,
  issuer: 'https://as.example.test',
  redirectUris: ['http://127.0.0.1:8765/callback'],
  dynamic: authMethod === 'none',
  registeredAt: 0,
});

describe('withOfflineAccess', () => {
  it('adds offline_access only when scopes_supported lists it, once', () => {
    expect(withOfflineAccess(['openid'], ['openid', 'offline_access'])).toEqual(['openid', 'offline_access']);
    expect(withOfflineAccess(['openid', 'offline_access'], ['openid', 'offline_access'])).toEqual(['openid', 'offline_access']);
    expect(withOfflineAccess(['openid'], ['openid', 'profile'])).toEqual(['openid']);
    expect(withOfflineAccess(['openid'], undefined)).toEqual(['openid']);
  });
});

describe('scopesToRegister', () => {
  it('registers the scopes asked for and the defaults a plain login asks for, those the server lists', () => {
    expect(scopesToRegister(['openid', 'courses:read'], ['openid', 'email', 'courses:read'])).toEqual(['openid', 'courses:read', 'email']);
    expect(scopesToRegister(['openid', 'courses:read'], undefined)).toEqual(['openid', 'courses:read', 'profile', 'email']);
  });
});

describe('secretMethod', () => {
  it('prefers client_secret_post, the platform’s documented method, when listed or when nothing is listed', () => {
    expect(secretMethod(as({ token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'] }), 'token')).toBe('client_secret_post');
    expect(secretMethod(as(), 'token')).toBe('client_secret_post');
    expect(secretMethod(as({ token_endpoint_auth_methods_supported: [] }), 'token')).toBe('client_secret_post');
  });

  it('uses client_secret_basic where that is the only secret method an endpoint lists', () => {
    expect(secretMethod(as({ token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'] }), 'token')).toBe('client_secret_basic');
    const mixed = as({ token_endpoint_auth_methods_supported: ['client_secret_post'], revocation_endpoint_auth_methods_supported: ['client_secret_basic'] });
    expect(secretMethod(mixed, 'token')).toBe('client_secret_post');
    expect(secretMethod(mixed, 'revocation')).toBe('client_secret_basic');
  });

  it('reads the token endpoint’s list for revocation when the revocation list is absent', () => {
    expect(secretMethod(as({ token_endpoint_auth_methods_supported: ['client_secret_basic'] }), 'revocation')).toBe('client_secret_basic');
  });
});

describe('clientAuth with client_secret_basic', () => {
  it('form-encodes id and secret as RFC 6749 §2.3.1 asks, leaving *-._ as they are', () => {
    const metadata = as({ token_endpoint_auth_methods_supported: ['client_secret_basic'] });
    const headers = new Headers();
    const body = new URLSearchParams();
    const auth = clientAuth({ registration: registration('client_secret_post'), secret: 'a-b_c.d*e f+g/h:i' }, metadata, 'token');
    auth(metadata, { client_id: 'plat-client' }, body, headers);
    const decoded = Buffer.from(headers.get('authorization')!.replace(/^Basic /, ''), 'base64').toString('utf8');
    expect(decoded).toBe('plat-client:a-b_c.d*e+f%2Bg%2Fh%3Ai');
    expect(body.has('client_secret')).toBe(false);
  });
});

describe('mayRevoke', () => {
  it('lets a public client try where the server lists none or nothing, not where it lists only secret methods', () => {
    expect(mayRevoke(as(), registration('none'))).toEqual({ ok: true });
    expect(mayRevoke(as({ revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic'] }), registration('none'))).toEqual({ ok: true });
    expect(mayRevoke(as({ revocation_endpoint_auth_methods_supported: ['client_secret_basic'] }), registration('none'))).toEqual({
      ok: false,
      methods: ['client_secret_basic'],
    });
    expect(mayRevoke(as({ revocation_endpoint_auth_methods_supported: ['client_secret_basic'] }), registration('client_secret_post'))).toEqual({ ok: true });
  });

  it('prints the server’s method names made safe', () => {
    const result = mayRevoke(as({ revocation_endpoint_auth_methods_supported: ['private_key_jwt\u001b[31m'] }), registration('none'));
    expect(result.ok).toBe(false);
    const [method] = (result as { methods: string[] }).methods;
    expect(method).toMatch(/^private_key_jwt/);
    expect(method).not.toContain('\u001b');
  });
});

describe('clockTime', () => {
  it('is HH:MM for today and carries the date otherwise', () => {
    const now = new Date(2026, 10, 23, 9, 0).getTime();
    expect(clockTime(new Date(2026, 10, 23, 14, 5).getTime(), now)).toBe('14:05');
    expect(clockTime(new Date(2026, 10, 24, 0, 30).getTime(), now)).toBe('2026-11-24 00:30');
  });
});
