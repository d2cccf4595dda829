/**
 * The whole journey through the built CLI against Glewlwyd (Debian's glewlwyd, an OpenID Connect provider in C;
 * test/interop/glewlwyd.ts): issuer /api/oidc on its own origin, named by the API's RFC 9728 document; nonce
 * required; one-use refresh tokens; only client_secret_basic at the revocation endpoint. Rotation and revocation
 * are read from the server's own database.
 *
 * Glewlwyd's metadata lists no `none` among token_endpoint_auth_methods_supported, so plat registers itself as the
 * confidential client the server wants (RFC 8252 §8.4: a secret per install) and uses the secret and method that
 * Glewlwyd assigns (RFC 7591 §3.2.1): the first journey needs no flags. The others use clients registered by
 * Glewlwyd's administrator (--client-id), as an integration would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanError, makeHome, type Home } from '../helpers/cli.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { addClient, GLEWLWYD_INSTALL, glewlwydInstalled, loginOnGlewlwyd as login, startGlewlwyd, type Glewlwyd } from './glewlwyd.js';
import { freePort, requireInstalled, skipUnless } from './servers.js';

const installed = glewlwydInstalled();
const skip = skipUnless(installed, GLEWLWYD_INSTALL);

const jti = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')).jti as string;

describe.skipIf(skip)('Glewlwyd through self-registration (a confidential client per install): the whole journey', () => {
  let server: Glewlwyd;
  let home: Home;
  const registered = () => server.query("SELECT gc_client_id AS id, gc_confidential AS confidential FROM g_client WHERE gc_client_id NOT LIKE 'plat-%'");
  beforeAll(async () => {
    requireInstalled(installed, GLEWLWYD_INSTALL);
    server = await startGlewlwyd();
    home = await makeHome();
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login with no --client-id: registers once, as a confidential client, and redeems the code with the secret Glewlwyd assigned', async () => {
    const { result, authorizeUrl } = await login(home, server, ['--scope', 'openid email courses:read']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ as Linus Pauling <linus@example\.test>/);
    const clients = registered();
    expect(clients).toEqual([{ id: authorizeUrl!.searchParams.get('client_id'), confidential: 1 }]);
    const { client } = await readProfile(home);
    expect(client).toMatchObject({ clientId: clients[0]!.id, dynamic: true });
    expect(JSON.stringify(client)).not.toMatch(/secret"\s*:\s*"/); // the secret is kept with the tokens, not in the profile
    const session = await readStoredSession(home);
    expect(session.refreshToken).toBeTruthy();
    expect(JSON.parse(Buffer.from(session.idToken.split('.')[1], 'base64url').toString('utf8')).nonce).toBe(authorizeUrl!.searchParams.get('nonce'));
  });

  it('whoami, call and refresh: the one-use refresh token spent at the server, with the assigned secret', async () => {
    const whoami = await home.run(['whoami', '--json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ name: 'Linus Pauling', email: 'linus@example.test' });
    const call = await home.run(['call', 'GET', '/v1/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout).items[0].title).toBe('Quantum chemistry');
    const before = await readStoredSession(home);
    const refreshed = await home.run(['refresh']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect((await readStoredSession(home)).refreshToken).not.toBe(before.refreshToken);
    expect(server.query('SELECT gpor_enabled AS enabled FROM gpo_refresh_token ORDER BY gpor_id')).toEqual([{ enabled: 0 }, { enabled: 1 }]);
  });

  it('logout: as the confidential client it now is, both tokens revoked in Glewlwyd’s database', async () => {
    const session = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/the tokens were revoked at the server/);
    expect(server.query('SELECT gpor_enabled AS enabled FROM gpo_refresh_token ORDER BY gpor_id')).toEqual([{ enabled: 0 }, { enabled: 0 }]);
    expect(server.query(`SELECT gpoa_enabled AS enabled FROM gpo_access_token WHERE gpoa_jti = '${jti(session.accessToken)}'`)).toEqual([{ enabled: 0 }]);
  });

  it('a second login reuses the registration and its secret', async () => {
    const { result } = await login(home, server, ['--scope', 'openid email courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(registered()).toHaveLength(1);
  });
});

describe.skipIf(skip)('Glewlwyd (OpenID Connect provider in C): the whole journey', () => {
  let server: Glewlwyd;
  let home: Home;
  let client: string[];
  beforeAll(async () => {
    requireInstalled(installed, GLEWLWYD_INSTALL);
    server = await startGlewlwyd();
    home = await makeHome();
    const port = await freePort();
    await addClient(server, { clientId: 'plat-public', redirectUri: `http://127.0.0.1:${port}/callback` });
    client = ['--client-id', 'plat-public', '--port', String(port)];
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login: the API names Glewlwyd; plat sends the nonce Glewlwyd requires and checks it in the ID token', async () => {
    const { result, authorizeUrl } = await login(home, server, [...client, '--scope', 'openid email courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ as Linus Pauling <linus@example\.test>/);
    const nonce = authorizeUrl!.searchParams.get('nonce');
    expect(nonce).toBeTruthy();
    const session = await readStoredSession(home);
    expect(JSON.parse(Buffer.from(session.idToken.split('.')[1], 'base64url').toString('utf8')).nonce).toBe(nonce);
    expect((await readProfile(home)).issuer).toBe(server.issuer);
    expect(session.refreshToken).toBeTruthy();
  });

  it('whoami: Glewlwyd’s UserInfo', async () => {
    const result = await home.run(['whoami', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'Linus Pauling', email: 'linus@example.test' });
  });

  it('call: the API accepts the token (checked by Glewlwyd’s own UserInfo)', async () => {
    const result = await home.run(['call', 'GET', '/v1/courses']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).items[0].title).toBe('Quantum chemistry');
  });

  it('refresh: the one-use refresh token is spent at the server and the new one kept', async () => {
    const before = await readStoredSession(home);
    const result = await home.run(['refresh']);
    expect(result.code, result.stderr).toBe(0);
    const after = await readStoredSession(home);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(server.query('SELECT gpor_enabled AS enabled FROM gpo_refresh_token ORDER BY gpor_id')).toEqual([{ enabled: 0 }, { enabled: 1 }]);
    expect((await home.run(['call', 'GET', '/v1/courses'])).code).toBe(0);
  });

  it('logout as a public client: Glewlwyd lets only client_secret_basic revoke; plat asks, says what it answered, and forgets the session here', async () => {
    const session = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expectCleanError(result);
    expect(result.stderr).toMatch(/refused to let plat's client revoke tokens: it answered HTTP 401 \(its metadata lists only client_secret_basic for revocation, not public clients like plat\)\. The tokens stay valid/);
    expect(server.query(`SELECT gpoa_enabled AS enabled FROM gpo_access_token WHERE gpoa_jti = '${jti(session.accessToken)}'`)).toEqual([{ enabled: 1 }]);
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
  });

  it('a plain plat login afterwards needs no flags: the profile remembers the client and its port', async () => {
    const { result } = await login(home, server, ['--scope', 'openid email courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/as Linus Pauling/);
    expect((await readProfile(home)).client.clientId).toBe('plat-public');
  });
});

describe.skipIf(skip)('Glewlwyd: a confidential integration (client_secret_post at the token endpoint, client_secret_basic, all Glewlwyd lists, at revocation)', () => {
  let server: Glewlwyd;
  let home: Home;
  beforeAll(async () => {
    requireInstalled(installed, GLEWLWYD_INSTALL);
    server = await startGlewlwyd();
    home = await makeHome();
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('signs in, refreshes and logs out with revocation, read from the server’s records', async () => {
    const port = await freePort();
    const client = { clientId: 'plat-integration', secret: 'integration-secret-0123456789', redirectUri: `http://127.0.0.1:${port}/callback` };
    await addClient(server, client);
    const { result } = await login(home, server, ['--client-id', client.clientId, '--client-secret-stdin', '--port', String(port), '--scope', 'openid courses:read'], {
      stdin: `${client.secret}\n`,
    });
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    const refreshed = await home.run(['refresh']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const session = await readStoredSession(home);
    const logout = await home.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toMatch(/the tokens were revoked at the server/);
    expect(server.query('SELECT gpor_enabled AS enabled FROM gpo_refresh_token ORDER BY gpor_id')).toEqual([{ enabled: 0 }, { enabled: 0 }]);
    expect(server.query(`SELECT gpoa_enabled AS enabled FROM gpo_access_token WHERE gpoa_jti = '${jti(session.accessToken)}'`)).toEqual([{ enabled: 0 }]);
  });
});
