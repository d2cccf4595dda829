/**
 * The whole journey through the built CLI against OpenAuth (@openauthjs/openauth; test/interop/openauth/server.mjs),
 * started as its documentation starts it: a password provider with its stock pages, in-memory storage. What it does
 * not offer, plat says truthfully: no dynamic registration (a pre-registered client, --client-id), no scopes, no ID
 * token, no UserInfo, no revocation. Its token responses carry no token_type (RFC 6749 §5.1 requires one), which plat
 * reads as Bearer. The API beside it verifies the JWT access token with OpenAuth's own client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, type Home } from '../helpers/cli.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { loginAt } from './journey.js';
import { startNodeServer, type InteropServer } from './servers.js';

const SIGN_IN = { email: 'mary@example.test', password: 'hidden figures' };

describe('OpenAuth (no registration, no UserInfo, no revocation, no token_type): the whole journey', () => {
  let server: InteropServer;
  let home: Home;
  beforeAll(async () => {
    server = await startNodeServer('openauth/server.mjs');
    home = await makeHome();
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login with the pre-registered client: the token response without token_type is read as Bearer (said under --verbose)', async () => {
    const { result, authorizeUrl } = await loginAt(home, server.baseUrl, `${server.issuer}/authorize`, SIGN_IN, ['--client-id', 'plat-cli', '--verbose']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ \(the server does not say as whom: it issued no ID token\)/);
    expect(result.stderr).toMatch(/no token_type \(RFC 6749 §5\.1 requires one\); plat reads it as Bearer/);
    expect(authorizeUrl!.searchParams.get('client_id')).toBe('plat-cli');
    expect(authorizeUrl!.searchParams.get('code_challenge_method')).toBe('S256');
    const session = await readStoredSession(home);
    expect(session).toMatchObject({ tokenType: 'Bearer', refreshToken: expect.any(String) });
    expect(session.idToken).toBeUndefined();
    const claims = JSON.parse(Buffer.from(session.accessToken.split('.')[1], 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ iss: server.issuer, mode: 'access', type: 'user', properties: { id: `user:${SIGN_IN.email}` } });
    expect(await readProfile(home)).toMatchObject({ issuer: server.issuer, client: { clientId: 'plat-cli', dynamic: false } });
  });

  it('whoami: exit 0, saying plainly that the server does not tell who you are', async () => {
    const result = await home.run(['whoami']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/does not tell plat who you are/);
  });

  it('call: the API (OpenAuth’s client: JWKS, issuer, subject schema) accepts the token', async () => {
    const result = await home.run(['call', 'GET', '/v1/courses']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ items: [{ title: 'Orbital mechanics' }], user: `user:${SIGN_IN.email}` });
  });

  it('refresh: again without token_type, read as Bearer; the server rotates the refresh token and plat keeps the new one', async () => {
    const before = await readStoredSession(home);
    const result = await home.run(['refresh']);
    expect(result.code, result.stderr).toBe(0);
    const after = await readStoredSession(home);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.tokenType).toBe('Bearer');
    expect((await home.run(['call', 'GET', '/v1/courses'])).code).toBe(0);
  });

  it('logout: the server offers no revocation, said truthfully; the tokens are forgotten here', async () => {
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout, result.stderr).toMatch(/the server offers no revocation, so the tokens were only removed from this machine/);
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
  });

  it('without --client-id, on a machine that never signed in there: plat says the server offers no registration and names --client-id', async () => {
    const fresh = await makeHome();
    try {
      const result = await fresh.run(['login', '--no-browser', '--base-url', server.baseUrl]);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/does not offer dynamic client registration\. Use a pre-registered integration: plat login --client-id <id>/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await fresh.cleanup();
    }
  });
});
