/**
 * Pre-registered integrations: `--client-id` alone uses an existing public client; with `--client-secret-stdin` a
 * confidential one that authenticates with client_secret_post at the token and revocation endpoints. Its secret
 * is kept beside the tokens (keychain, or the 0600 file), never in the profile, a process argument or a trace.
 */
import { readFile, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError, makeHome, type Home } from '../../helpers/cli.js';
import { keyring } from '../../helpers/components.js';
import { startPlatform } from '../../platform/index.mjs';
import { approving, authorizeUrls, param, paste, redirectPort, signIn } from '../../helpers/consent.js';
import { filesWithText, readProfile, readStoredSession, sessionFiles } from '../../helpers/state.js';
import { APPROVING_BROWSER, apiStatus } from '../../helpers/login.js';
import { usePlatform } from '../../helpers/platform.js';

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const platform = usePlatform();
let home: Home;
let publicId: string;
let confidentialId: string;
let secret: string;

beforeAll(() => {
  ({ publicClientId: publicId, confidentialClientId: confidentialId, confidentialClientSecret: secret } = platform.preRegistered);
});
afterEach(async () => {
  await home?.cleanup();
});

/** `plat login --client-id <confidential> --client-secret-stdin`, the secret piped in as its first line. */
function confidentialLogin(args: string[] = [], stdin = `${secret}\n`) {
  const approval = approving(platform);
  return home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-id', confidentialId, '--client-secret-stdin', ...args], {
    stdin,
    onStderr: approval.onStderr,
  });
}

describe('a pre-registered public client (--client-id)', () => {
  beforeEach(async () => {
    home = await makeHome();
  });

  it('signs in without registering, refreshes, is reused by a plain plat login, and logs out with revocation', async () => {
    const { result, consent: approval } = await signIn(home, platform, ['--client-id', publicId, '--scope', 'courses:read']);
    expect(JSON.parse((await home.run(['status', '--json'])).stdout).profiles[0].clientId).toBe(publicId);
    expect(param(approval.urls[0]!, 'client_id')).toBe(publicId);
    expect(result.stdout).toMatch(/Scopes: openid profile email courses:read/);
    expect(platform.stats.count('register')).toBe(0);
    expect((await readProfile(home)).client).toMatchObject({ clientId: publicId, authMethod: 'none', dynamic: false });

    expect((await home.run(['refresh'])).code).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(1);

    const again = await signIn(home, platform);
    expect(param(again.consent.urls[0]!, 'client_id')).toBe(publicId);
    expect(platform.stats.count('register')).toBe(0);

    const { accessToken } = await readStoredSession(home);
    const logout = await home.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toMatch(/revoked/);
    expect(await apiStatus(platform, accessToken)).toBe(401);
  });

  it('on a server that matches ports exactly, a later plain login listens on the port the client used', async () => {
    const port = await freePort();
    const strict = await startPlatform({
      clients: [{ client_id: 'fixed-port-app', redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: 'none' }],
    });
    try {
      strict.knobs.strictRedirectPort = true;
      const first = await signIn(home, strict, ['--client-id', 'fixed-port-app', '--port', String(port)]);
      expect(redirectPort(first.consent.urls[0]!)).toBe(port);
      const approval = approving(strict);
      const again = await home.run(['login', '--no-browser'], { onStderr: approval.onStderr });
      expect(again.code, again.stderr).toBe(0);
      expect(param(approval.urls[0]!, 'client_id')).toBe('fixed-port-app');
      expect(redirectPort(approval.urls[0]!)).toBe(port);
      expect(strict.stats.count('register')).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it('a client the token endpoint refuses is reported for what it is, without registering or retrying', async () => {
    platform.knobs.unknownClients = [publicId];
    platform.knobs.unknownClientsAt = 'token';
    const approval = approving(platform);
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-id', publicId], {
      onStderr: approval.onStderr,
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`The server does not accept the client ${publicId} (invalid_client`);
    expectCleanError(result);
    expect(approval.urls).toHaveLength(1);
    expect(platform.stats.count('register')).toBe(0);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('an integration the token endpoint stops accepting: the refresh ends the session and names the login with its flags', async () => {
    expect((await signIn(home, platform, ['--client-id', publicId, '--scope', 'courses:read'])).result.code).toBe(0);
    platform.knobs.unknownClients = [publicId, confidentialId];
    platform.knobs.unknownClientsAt = 'token';
    const refused = await home.run(['refresh']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(`error: The server rejected the credentials of the integration ${publicId} (invalid_client`);
    expect(refused.stderr).toMatch(new RegExp(`so the session ended\\. Sign in again: plat login --client-id ${publicId}\\n$`));
    expectCleanError(refused);
    expect((await home.run(['token'])).code).toBe(4);

    // A confidential one: the login named passes its secret on stdin again.
    platform.knobs.unknownClients = [];
    expect((await confidentialLogin(['--scope', 'courses:read'])).code).toBe(0);
    platform.knobs.unknownClients = [confidentialId];
    const confidential = await home.run(['refresh']);
    expect(confidential.code).toBe(4);
    expect(confidential.stderr).toMatch(new RegExp(`integration ${confidentialId} \\(invalid_client.*Sign in again: plat login --client-id ${confidentialId} --client-secret-stdin\\n$`));
    expectCleanError(confidential);
  });

  it('a client the authorization endpoint does not know: the browser sees an error page, and at --timeout plat says why', async () => {
    const approval = approving(platform);
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-id', 'no-such-integration', '--timeout', '2'], {
      onStderr: approval.onStderr,
    });
    expect(approval.errors.join('\n')).toMatch(/consent flow stopped at \/oauth\/authorize with HTTP 400/);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/No answer from the browser within 2 s\./);
    expect(result.stderr).toMatch(/The server does not accept the client no-such-integration with the redirect address http:\/\/127\.0\.0\.1:\d+\/callback, so the browser showed an error page\. Check --client-id/);
    expectCleanError(result);
    expect(platform.stats.count('register')).toBe(0);
    expect(await sessionFiles(home)).toEqual([]);
  });
});

describe('a confidential integration (--client-id with --client-secret-stdin), file store', () => {
  beforeEach(async () => {
    home = await makeHome();
  });

  it('signs in with client_secret_post and keeps the secret only in the 0600 token file', async () => {
    const result = await confidentialLogin(['--scope', 'courses:read', '--verbose']);
    expect(result.code, result.stderr).toBe(0);
    expect(platform.stats.count('register')).toBe(0);
    // client_secret_post: the secret travels in the token request's form body (redacted in the trace)
    expect(result.stderr).toMatch(/^> .*grant_type=authorization_code.*client_secret=\[redacted\]/m);
    for (const text of [result.stdout, result.stderr]) expect(text).not.toContain(secret);

    const profileText = await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8');
    expect(JSON.parse(profileText).client).toMatchObject({ clientId: confidentialId, authMethod: 'client_secret_post', dynamic: false });
    expect(profileText).not.toContain(secret);
    const tokenFile = path.join(home.configDir, 'tokens', 'default.json');
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect((await readStoredSession(home)).clientSecret).toBe(secret);
    const holders = (await filesWithText(home.dir)).filter(({ text }) => text.includes(secret)).map(({ file }) => path.join(home.dir, file));
    expect(holders).toEqual([tokenFile]);
  });

  it('refreshes and logs out (revoking both tokens) with the secret, then keeps only the secret, in the 0600 token store', async () => {
    expect((await confidentialLogin(['--scope', 'courses:read'])).code).toBe(0);
    const before = await readStoredSession(home);
    const refresh = await home.run(['refresh', '--verbose']);
    expect(refresh.code, refresh.stderr).toBe(0);
    expect(refresh.stderr).toMatch(/^> .*grant_type=refresh_token.*client_secret=\[redacted\]/m);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    const after = await readStoredSession(home);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.clientSecret).toBe(secret);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);

    const logout = await home.run(['logout', '--verbose']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toMatch(/the tokens were revoked at the server/);
    expect(logout.stderr).not.toMatch(/Could not revoke/);
    expect(logout.stderr.match(/^> .*\/api\/oauth\/revoke/gm)).toHaveLength(2);
    expect(logout.stderr).toMatch(/^> .*token_type_hint=refresh_token.*client_secret=\[redacted\]|^> .*client_secret=\[redacted\].*token_type_hint=refresh_token/m);
    expect(await apiStatus(platform, after.accessToken)).toBe(401);
    const replay = await fetch(`${platform.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: after.refreshToken, client_id: confidentialId, client_secret: secret }),
    });
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    // The tokens are gone; the integration's secret is kept (a later login needs no flags), in its own 0600 entry.
    const kept = path.join(home.configDir, 'tokens', 'default.client-secret.json');
    const holders = (await filesWithText(home.dir)).filter(({ text }) => text.includes(secret)).map(({ file }) => path.join(home.dir, file));
    expect(holders).toEqual([kept]);
    expect((await stat(kept)).mode & 0o777).toBe(0o600);
    const keptEntry = JSON.parse(await readFile(kept, 'utf8'));
    expect(keptEntry).toMatchObject({ accessToken: '', clientSecret: secret });
    expect(keptEntry.refreshToken).toBeUndefined();
    expect((await home.run(['token'])).code).toBe(4);
  });

  it('a step-up while signed in reuses the stored secret; after logout a plain plat login needs no flags', async () => {
    expect((await confidentialLogin(['--scope', 'courses:read'])).code).toBe(0);
    const stepUp = await home.run(['login', '--add-scope', 'analytics:read'], { env: { PLAT_BROWSER: APPROVING_BROWSER } });
    expect(stepUp.code, stepUp.stderr).toBe(0);
    expect(param(authorizeUrls(stepUp.stderr)[0]!, 'client_id')).toBe(confidentialId);
    expect((await home.run(['call', 'GET', '/api/analytics'])).code).toBe(0);
    expect((await readStoredSession(home)).clientSecret).toBe(secret);

    expect((await home.run(['logout'])).code).toBe(0);
    const again = await home.run(['login', '--verbose'], { env: { PLAT_BROWSER: APPROVING_BROWSER } });
    expect(again.code, again.stderr).toBe(0);
    expect(param(authorizeUrls(again.stderr)[0]!, 'client_id')).toBe(confidentialId);
    expect(again.stderr).toMatch(/^> .*grant_type=authorization_code.*client_secret=\[redacted\]/m);
    expect(platform.stats.count('register')).toBe(0);
    // the secret is beside the tokens again, and only there
    expect((await readStoredSession(home)).clientSecret).toBe(secret);
    const holders = (await filesWithText(home.dir)).filter(({ text }) => text.includes(secret)).map(({ file }) => path.join(home.dir, file));
    expect(holders).toEqual([path.join(home.configDir, 'tokens', 'default.json')]);
  });

  it('a wrong secret is refused by the server (exit 4), nothing is stored and nothing is registered', async () => {
    const result = await confidentialLogin([], 'not-the-secret\n');
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(new RegExp(`rejected the credentials of the integration ${confidentialId} \\(invalid_client`));
    expect(result.stderr).toMatch(/Check --client-id and the secret passed on stdin/);
    expectCleanError(result);
    expect(platform.stats.count('register')).toBe(0);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('the secret is the first line of stdin and a pasted redirect address may follow', async () => {
    const approval = approving(platform, { deliver: paste });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-id', confidentialId, '--client-secret-stdin'], {
      stdin: `${secret}\n`,
      keepStdinOpen: true,
      onStderr: approval.onStderr,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await readStoredSession(home)).clientSecret).toBe(secret);
  });

  it('usage errors: a secret without --client-id, and an empty stdin', async () => {
    const noId = await home.run(['login', '--base-url', platform.baseUrl, '--client-secret-stdin'], { stdin: `${secret}\n` });
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/--client-secret-stdin needs --client-id/);
    const empty = await home.run(['login', '--base-url', platform.baseUrl, '--client-id', confidentialId, '--client-secret-stdin'], { stdin: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/stdin was empty/);
  });
});

describe.skipIf(keyring.skip)(keyring.title('a confidential integration with the real keychain'), () => {
  beforeEach(async () => {
    keyring.require();
    home = await makeHome({ PLAT_TOKEN_STORE: undefined });
  });

  it('logs in, steps up, refreshes and logs out without its secret touching a file', async () => {
    const login = await confidentialLogin(['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).not.toMatch(/warning/);
    expect((await readProfile(home)).tokenStore).toBe('keychain');
    const noSecretInFiles = async () => {
      const files = await filesWithText(home.dir);
      for (const value of [secret, ...platform.secrets()]) {
        expect(files.filter(({ text }) => text.includes(value)).map(({ file }) => file)).toEqual([]);
      }
    };
    await noSecretInFiles();

    const stepUp = await home.run(['login', '--add-scope', 'analytics:read'], { env: { PLAT_BROWSER: APPROVING_BROWSER } });
    expect(stepUp.code, stepUp.stderr).toBe(0);
    expect((await home.run(['refresh'])).code).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect((await home.run(['call', 'GET', '/api/analytics'])).code).toBe(0);
    await noSecretInFiles();

    const token = (await home.run(['token'])).stdout.trim();
    const logout = await home.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toMatch(/the tokens were revoked at the server/);
    expect(await apiStatus(platform, token)).toBe(401);
    await noSecretInFiles();

    // The secret was kept across logout in the keychain itself: a plain login needs no flags and no file.
    const again = await home.run(['login'], { env: { PLAT_BROWSER: APPROVING_BROWSER } });
    expect(again.code, again.stderr).toBe(0);
    expect(platform.stats.count('register')).toBe(0);
    await noSecretInFiles();
  });
});
