/**
 * The whole journey through the built CLI against Authlib's OpenID Connect provider (Debian python3-authlib +
 * python3-flask; test/interop/authlib/server.py): issuer under a path, endpoints at paths unlike the spec's, a
 * registered client allowed only the scopes it registered, rotation and revocation read from the server's records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_TIME, expectCleanError, makeHome, type Home } from '../helpers/cli.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { loginAt } from './journey.js';
import { freePort, pythonHas, requireInstalled, skipUnless, startPythonServer, type InteropServer } from './servers.js';

const INSTALL = 'apt-get install -y python3-authlib python3-flask';
const installed = pythonHas(['authlib', 'flask']);
const skip = skipUnless(installed, INSTALL);
const SIGN_IN = { username: 'grace', password: 'correct horse', confirm: 'yes' };

async function start(options: Record<string, unknown> = {}): Promise<InteropServer> {
  return startPythonServer('authlib/server.py', options, '/idp/authlib');
}

/** A server started with `options`, a fresh home signed in as a public client, then `plat logout` there. */
async function withLogout(
  options: Record<string, unknown>,
  check: (run: { server: InteropServer; local: Home; session: Record<string, any>; logout: Awaited<ReturnType<Home['run']>> }) => Promise<void>,
): Promise<void> {
  const server = await start(options);
  const local = await makeHome();
  try {
    const { result } = await loginAt(local, server.baseUrl, `${server.issuer}/consent/authorize`, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    const session = await readStoredSession(local);
    await check({ server, local, session, logout: await local.run(['logout']) });
  } finally {
    await local.cleanup();
    await server.close();
  }
}

describe.skipIf(skip)('Authlib (OpenID Connect provider): the whole journey', () => {
  let server: InteropServer;
  let home: Home;
  let authorize: string;
  beforeAll(async () => {
    requireInstalled(installed, INSTALL);
    server = await start();
    home = await makeHome();
    authorize = `${server.issuer}/consent/authorize`;
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login: discovers the issuer under its path, registers once with scope, grant and response types, sends a nonce', async () => {
    const { result, authorizeUrl } = await loginAt(home, server.baseUrl, authorize, SIGN_IN, ['--scope', 'openid profile email courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ as Grace Hopper <grace@example\.test>/);
    expect(result.stdout).toMatch(/Scopes: .*courses:read/);
    expect(authorizeUrl!.searchParams.get('nonce')).toMatch(/^[\w-]{32,}$/);
    const asked = authorizeUrl!.searchParams.get('scope')!;
    // Authlib does not list offline_access, so plat does not ask for it (and still gets a refresh token).
    expect(asked.split(' ')).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'courses:read']));
    expect(asked).not.toMatch(/offline_access/);
    const { registrations } = await server.state();
    expect(registrations).toHaveLength(1);
    expect(registrations[0].metadata).toMatchObject({
      scope: asked,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect((await readProfile(home)).issuer).toBe(server.issuer);
    expect((await readStoredSession(home)).refreshToken).toBeTruthy();
  });

  it('whoami: UserInfo at the server’s own path', async () => {
    const result = await home.run(['whoami', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ sub: 'user-grace', email: 'grace@example.test' });
  });

  it('call: the protected API accepts the token (checked by Authlib’s own bearer validator)', async () => {
    const result = await home.run(['call', 'GET', '/v1/courses']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ items: [{ title: 'Compilers' }], user: 'user-grace' });
  });

  it('refresh: the server rotates the refresh token and plat keeps the new one', async () => {
    const before = await readStoredSession(home);
    const result = await home.run(['refresh']);
    expect(result.code, result.stderr).toBe(0);
    const after = await readStoredSession(home);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    const { tokens } = await server.state();
    const old = tokens.find((t: any) => t.refresh_token === before.refreshToken);
    const current = tokens.find((t: any) => t.refresh_token === after.refreshToken);
    expect(old).toMatchObject({ refresh_revoked: true });
    expect(current).toMatchObject({ refresh_revoked: false, access_token: after.accessToken });
    expect((await home.run(['call', 'GET', '/v1/courses'])).code).toBe(0);
  });

  it('logout: both tokens revoked in the server’s records, the session gone here; a new login registers nothing', async () => {
    const session = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/the tokens were revoked at the server/);
    const { tokens } = await server.state();
    expect(tokens.find((t: any) => t.access_token === session.accessToken)).toMatchObject({ access_revoked: true, refresh_revoked: true });
    // and the API, asking the server's own validator, now refuses the old access token
    const api = await fetch(`${server.baseUrl}/v1/courses`, { headers: { authorization: `Bearer ${session.accessToken}` } });
    expect(api.status).toBe(401);

    const again = await loginAt(home, server.baseUrl, authorize, SIGN_IN, ['--scope', 'openid profile email courses:read']);
    expect(again.result.code, again.result.stderr).toBe(0);
    expect((await server.state()).registrations).toHaveLength(1);
  });
});

describe.skipIf(skip)('Authlib: client authentication and revocation policies', () => {
  let home: Home;
  beforeAll(() => requireInstalled(installed, INSTALL));
  afterAll(async () => home?.cleanup());

  it('a confidential integration where the server lists only client_secret_basic: token, refresh and revocation', async () => {
    // Authlib compares redirect URIs exactly: the client is registered on a loopback port this test owns.
    const port = await freePort();
    const server = await start({ confidentialRedirectUri: `http://127.0.0.1:${port}/callback` });
    home = await makeHome();
    try {
      const { confidential } = await server.state();
      const { result } = await loginAt(
        home,
        server.baseUrl,
        `${server.issuer}/consent/authorize`,
        SIGN_IN,
        ['--client-id', confidential.id, '--client-secret-stdin', '--port', String(port), '--scope', 'courses:read'],
        { stdin: `${confidential.secret}\n`, keepStdinOpen: false },
      );
      expect(result.code, result.stderr).toBe(0);
      const before = await readStoredSession(home);
      const refreshed = await home.run(['refresh']);
      expect(refreshed.code, refreshed.stderr).toBe(0);
      const after = await readStoredSession(home);
      expect(after.refreshToken).not.toBe(before.refreshToken);
      const logout = await home.run(['logout']);
      expect(logout.stdout).toMatch(/revoked at the server/);
      const { tokens } = await server.state();
      expect(tokens.find((t: any) => t.access_token === after.accessToken)).toMatchObject({ client_id: confidential.id, access_revoked: true, refresh_revoked: true });
      expect((await server.state()).registrations).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('a server that does not let public clients revoke: plat asks anyway, says what it answered, and removes the session here', async () => {
    await withLogout({ revocationForPublicClients: false }, async ({ server, local, session, logout }) => {
      expect(logout.code, logout.stderr).toBe(0);
      expectCleanError(logout);
      expect(logout.stderr).toMatch(/refused to let plat's client revoke tokens: it answered HTTP 401 \(invalid_client/);
      expect(logout.stderr).toMatch(/its metadata lists only client_secret_basic for revocation, not public clients like plat/);
      expect(logout.stderr).toMatch(new RegExp(`stay valid at the server until they expire \\(the access token until ${CLOCK_TIME}\\)`));
      expect(logout.stderr).not.toMatch(/Try again later/);
      const { tokens } = await server.state();
      expect(tokens.find((t: any) => t.access_token === session.accessToken)).toMatchObject({ access_revoked: false });
      expect((await readProfile(local)).loggedIn).toBe(false);
      await expect(readStoredSession(local)).rejects.toThrow(/ENOENT/);
    });
  });

  it('metadata that leaves public clients out of revocation, from a server that revokes their tokens when asked: revoked', async () => {
    await withLogout({ listedRevocationMethods: ['client_secret_basic'] }, async ({ server, session, logout }) => {
      expect(logout.code, logout.stderr).toBe(0);
      expect(logout.stdout).toMatch(/the tokens were revoked at the server/);
      expect(logout.stderr).toBe('');
      const { tokens } = await server.state();
      expect(tokens.find((t: any) => t.access_token === session.accessToken)).toMatchObject({ access_revoked: true, refresh_revoked: true });
    });
  });
});
