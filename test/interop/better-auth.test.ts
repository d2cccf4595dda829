/**
 * The whole journey through the built CLI against Better Auth's OAuth 2.1 provider (better-auth with
 * @better-auth/oauth-provider; test/interop/better-auth/server.mjs): a plain OAuth 2.1 server listing API scopes
 * and offline_access but no openid, so no ID token and no UserInfo; its issuer under a path (/api/auth) with RFC
 * 8414's path-inserted metadata address; refresh tokens only for offline_access, rotated, a replayed one revoking
 * the grant; JWT access tokens bound to the API (RFC 8707) that its revocation endpoint refuses to revoke
 * (unsupported_token_type, RFC 7009 §2.2.1) while it does revoke a public client's refresh token, though its
 * metadata lists no `none` there. Registration, rotation and revocation are read from the server's own records.
 * The plugin lists dpop_signing_alg_values_supported by default, so plat's tokens are DPoP-bound (RFC 9449) and the
 * API checks them as the plugin's resource client does for new integrations (the whole request: scheme, proof,
 * ath, cnf.jkt).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_TIME, makeHome, type Home } from '../helpers/cli.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { dpopProof, otherKey, sessionKey } from './dpop-proof.js';
import { loginAt } from './journey.js';
import { startNodeServer, type InteropServer } from './servers.js';

const SIGN_IN = { email: 'katherine@example.test', password: 'orbital mechanics', decision: 'approve' };
/** How Better Auth keeps a token in its records (storeTokens "hashed"): SHA-256, base64url. */
const stored = (token: string) => createHash('sha256').update(token).digest('base64url');

describe('Better Auth OAuth 2.1 provider (no openid, no ID token): the whole journey', () => {
  let server: InteropServer;
  let home: Home;
  let authorize: string;
  let resource: string;
  beforeAll(async () => {
    server = await startNodeServer('better-auth/server.mjs');
    home = await makeHome();
    authorize = `${server.issuer}/oauth2/authorize`;
    resource = (await server.state()).resource;
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login: registers once as a public native client, asks for offline_access (listed) and no openid (not listed), sends resource', async () => {
    const { result, authorizeUrl } = await loginAt(home, server.baseUrl, authorize, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+/);
    const asked = authorizeUrl!.searchParams.get('scope')!.split(' ');
    expect(asked.sort()).toEqual(['courses:read', 'offline_access']);
    expect(authorizeUrl!.searchParams.get('nonce')).toBeNull();
    expect(authorizeUrl!.searchParams.get('resource')).toBe(resource);

    const { oauthClient, oauthRefreshToken, user } = await server.state();
    expect(oauthClient).toHaveLength(1);
    expect(oauthClient[0]).toMatchObject({ tokenEndpointAuthMethod: 'none', applicationType: 'native', grantTypes: ['authorization_code', 'refresh_token'] });
    const session = await readStoredSession(home);
    expect(session.idToken).toBeUndefined();
    expect(oauthRefreshToken).toEqual([
      expect.objectContaining({ token: stored(session.refreshToken), clientId: oauthClient[0].clientId, userId: user[0].id, resources: [resource] }),
    ]);
    expect(oauthRefreshToken[0].revoked).toBeUndefined();
    // The access token is the server's JWT for the API: audience the API, subject the signed-in user.
    const claims = JSON.parse(Buffer.from(session.accessToken.split('.')[1], 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ aud: resource, sub: user[0].id, iss: server.issuer, scope: 'courses:read offline_access' });
    expect((await readProfile(home)).issuer).toBe(server.issuer);
  });

  it('whoami: exit 0, saying plainly that the server does not tell who you are', async () => {
    const result = await home.run(['whoami']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/does not tell plat who you are/);
  });

  it('call: the API (the plugin’s resource client: JWKS, audience, scope) accepts the token', async () => {
    const result = await home.run(['call', 'GET', '/v1/courses']);
    expect(result.code, result.stderr).toBe(0);
    const { user } = await server.state();
    expect(JSON.parse(result.stdout)).toMatchObject({ items: [{ title: 'Orbital mechanics' }], user: user[0].id });
  });

  it('DPoP (listed by the plugin by default): the tokens are bound to plat’s key, and the API refuses the token as Bearer and with another key’s proof', async () => {
    const session = await readStoredSession(home);
    const token: string = session.accessToken;
    const jkt = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).cnf?.jkt;
    expect(jkt).toBeTruthy();
    const status = await home.run(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/"DPoP"/);
    expect(status.stdout).toContain(jkt);
    const url = `${server.baseUrl}/v1/courses`;
    const answer = async (headers: Record<string, string>) => {
      const response = await fetch(url, { headers });
      await response.text();
      return response.status;
    };
    expect({
      bearer: await answer({ authorization: `Bearer ${token}` }),
      noProof: await answer({ authorization: `DPoP ${token}` }),
      otherKey: await answer({ authorization: `DPoP ${token}`, dpop: dpopProof(otherKey(), 'GET', url, token) }),
      own: await answer({ authorization: `DPoP ${token}`, dpop: dpopProof(sessionKey(session), 'GET', url, token) }),
    }).toEqual({ bearer: 401, noProof: 401, otherKey: 401, own: 200 });
  });

  it('refresh: the server rotates the refresh token (the old one marked revoked) and plat keeps the new one', async () => {
    const before = await readStoredSession(home);
    const result = await home.run(['refresh']);
    expect(result.code, result.stderr).toBe(0);
    const after = await readStoredSession(home);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    const { oauthRefreshToken } = await server.state();
    expect(oauthRefreshToken.find((t: any) => t.token === stored(before.refreshToken))).toMatchObject({ revoked: expect.any(String), rotatedAt: expect.any(String) });
    const current = oauthRefreshToken.find((t: any) => t.token === stored(after.refreshToken));
    expect(current).toMatchObject({ resources: [resource] });
    expect(current.revoked).toBeUndefined();
    expect((await home.run(['call', 'GET', '/v1/courses'])).code).toBe(0);
  });

  it('logout: the refresh token revoked in the server’s records; the JWT access token, which the server will not revoke, said to stay valid until it expires', async () => {
    const session = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    const { oauthRefreshToken } = await server.state();
    expect(oauthRefreshToken.find((t: any) => t.token === stored(session.refreshToken))).toMatchObject({ revoked: expect.any(String) });
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
    // The server answered unsupported_token_type for the access token: plat says so, and until when it works.
    expect(result.stderr).toMatch(new RegExp(`access token .*until ${CLOCK_TIME}`));
    expect(result.stderr).not.toMatch(/Try again later/);
    // As said: a self-contained JWT stays valid at the API until it expires (bound to plat's key: with its proof).
    const url = `${server.baseUrl}/v1/courses`;
    const api = await fetch(url, { headers: { authorization: `DPoP ${session.accessToken}`, dpop: dpopProof(sessionKey(session), 'GET', url, session.accessToken) } });
    expect(api.status).toBe(200);
  });

  it('a second login reuses the registration', async () => {
    const { result } = await loginAt(home, server.baseUrl, authorize, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    const { oauthClient, oauthRefreshToken } = await server.state();
    expect(oauthClient).toHaveLength(1);
    expect(oauthRefreshToken.filter((t: any) => !t.revoked)).toEqual([expect.objectContaining({ clientId: oauthClient[0].clientId })]);
  });
});

describe('Better Auth OAuth 2.1 provider listing openid: an OpenID login with its EdDSA ID token', () => {
  let server: InteropServer;
  let home: Home;
  beforeAll(async () => {
    server = await startNodeServer('better-auth/server.mjs', { openid: true });
    home = await makeHome();
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('asks for openid because it is listed now, checks the ID token’s nonce, and whoami names the person', async () => {
    const { result, authorizeUrl } = await loginAt(home, server.baseUrl, `${server.issuer}/oauth2/authorize`, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ as Katherine Johnson/);
    expect(authorizeUrl!.searchParams.get('scope')!.split(' ')).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access', 'courses:read']));
    const session = await readStoredSession(home);
    const [header, payload] = session.idToken.split('.').slice(0, 2).map((part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    expect(header.alg).toBe('EdDSA');
    expect(payload).toMatchObject({ iss: server.issuer, nonce: authorizeUrl!.searchParams.get('nonce') });
    const whoami = await home.run(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/Katherine Johnson/);
  });
});

describe('Better Auth with DPoP: a refresh token copied out of plat’s store', () => {
  let server: InteropServer;
  let home: Home;
  beforeAll(async () => {
    server = await startNodeServer('better-auth/server.mjs');
    home = await makeHome();
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('is refused at the token endpoint without a proof and with another key’s proof (a public client’s refresh token is bound, RFC 9449 §5)', async () => {
    const { result } = await loginAt(home, server.baseUrl, `${server.issuer}/oauth2/authorize`, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    const session = await readStoredSession(home);
    const { client } = await readProfile(home);
    const tokenUrl = `${server.issuer}/oauth2/token`;
    const refresh = async (headers: Record<string, string>) => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: session.refreshToken, client_id: client.clientId }),
      });
      return { status: response.status, body: await response.text() };
    };
    const without = await refresh({});
    const other = await refresh({ dpop: dpopProof(otherKey(), 'POST', tokenUrl) });
    expect(without).toMatchObject({ status: 400, body: expect.stringContaining('invalid_dpop_proof') });
    expect(other).toMatchObject({ status: 400, body: expect.stringContaining('invalid_dpop_proof') });
    // Refused before it was spent: plat, which holds the key, still refreshes with it.
    const refreshed = await home.run(['refresh']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
  });
});
