/**
 * Registration hygiene. What plat can observe: invalid_client from the token endpoint (at login or refresh), and,
 * when it asks, whether the authorization endpoint redirects or shows an error page. It asks only off the normal
 * path: when the callback port changed, and when a login with a stored client got no answer (timeout, Ctrl-C).
 * A normal second login adds no request.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCleanError } from '../../helpers/cli.js';
import { approving, authorizeUrls, param, redirectPort, signIn } from '../../helpers/consent.js';
import { profilePath, readProfile, readStoredSession } from '../../helpers/state.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();
const blockers: Server[] = [];

afterEach(async () => {
  await Promise.all(blockers.splice(0).map((b) => new Promise((r) => b.close(r))));
});

/** Occupies a port on 127.0.0.1 (as another program would). */
async function occupy(port: number): Promise<void> {
  const blocker = createServer();
  await new Promise<void>((resolve, reject) => {
    blocker.once('error', reject);
    blocker.listen(port, '127.0.0.1', resolve);
  });
  blockers.push(blocker);
}

/** Signs in once; returns the stored registration's client id and port. */
async function registered(): Promise<{ clientId: string; port: number }> {
  const { consent: approval } = await signIn(home, platform);
  platform.stats.reset();
  return { clientId: param(approval.urls[0]!, 'client_id')!, port: redirectPort(approval.urls[0]!) };
}

/** `plat login` that approves every authorization URL it prints. */
function login(args: string[] = []) {
  const approval = approving(platform);
  return home.run(['login', '--no-browser', ...args], { onStderr: approval.onStderr }).then((result) => ({ result, approval }));
}

describe('a stored registration', () => {
  it('is reused on the same port with no extra request', async () => {
    const first = await registered();
    const { result, approval } = await login();
    expect(result.code, result.stderr).toBe(0);
    expect(param(approval.urls[0]!, 'client_id')).toBe(first.clientId);
    expect(redirectPort(approval.urls[0]!)).toBe(first.port);
    expect(platform.stats.count('register')).toBe(0);
    expect(platform.stats.count('GET /oauth/authorize')).toBe(1); // the browser's own
    // the login's own fresh discovery (servers-move.test.ts), nothing more
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(1);
  });

  it('on another port is kept when the server accepts any loopback port (one question to the server)', async () => {
    const first = await registered();
    await occupy(first.port);
    const { result, approval } = await login();
    expect(result.code, result.stderr).toBe(0);
    expect(redirectPort(approval.urls[0]!)).not.toBe(first.port);
    expect(param(approval.urls[0]!, 'client_id')).toBe(first.clientId);
    expect(platform.stats.count('register')).toBe(0);
    expect(platform.stats.count('GET /oauth/authorize')).toBe(2); // plat's question, then the browser
    expect(result.stderr).not.toMatch(/registering again/);
  });

  it('on another port is replaced when the server matches ports exactly (strictRedirectPort)', async () => {
    platform.knobs.strictRedirectPort = true;
    const first = await registered();
    await occupy(first.port);
    const { result, approval } = await login();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`The server does not accept plat's registration on port ${redirectPort(approval.urls[0]!)} (it was made for port ${first.port}); registering again.`);
    expect(platform.stats.count('register')).toBe(1);
    const profile = await readProfile(home);
    expect(profile.client.clientId).not.toBe(first.clientId);
    expect(profile.client.redirectUris).toEqual([`http://127.0.0.1:${redirectPort(approval.urls[0]!)}/callback`]);
  });

  it('--port naming another port behaves the same with a strict server', async () => {
    platform.knobs.strictRedirectPort = true;
    const first = await registered();
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as import('node:net').AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const { result, approval } = await login(['--port', String(port)]);
    expect(result.code, result.stderr).toBe(0);
    expect(redirectPort(approval.urls[0]!)).toBe(port);
    expect(param(approval.urls[0]!, 'client_id')).not.toBe(first.clientId);
    expect(platform.stats.count('register')).toBe(1);
  });
});

describe('a registration the server no longer knows', () => {
  it('at the token endpoint: plat drops it, registers anew and asks once more, in the same run', async () => {
    const first = await registered();
    platform.knobs.unknownClients = [first.clientId];
    platform.knobs.unknownClientsAt = 'token';
    const { result, approval } = await login();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/The server no longer recognises plat's registration \(invalid_client\); registering again and asking once more/);
    expect(approval.urls).toHaveLength(2);
    expect(param(approval.urls[0]!, 'client_id')).toBe(first.clientId);
    const second = param(approval.urls[1]!, 'client_id');
    expect(second).not.toBe(first.clientId);
    expect(platform.stats.count('register')).toBe(1);
    expect(platform.stats.count('token:authorization_code')).toBe(2);
    expect((await readProfile(home)).client.clientId).toBe(second);
    expect((await home.run(['call', 'GET', '/api/echo'])).code).toBe(0);
  });

  it('asks once more only once: a second invalid_client ends the login', async () => {
    await registered();
    platform.override('/api/oauth/token', (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }));
      return true;
    });
    const { result, approval } = await login();
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/The server rejected the registration plat had just made \(invalid_client: client authentication failed\)/);
    expectCleanError(result);
    expect(approval.urls).toHaveLength(2);
    expect(platform.stats.count('register')).toBe(1);
    expect(platform.stats.count('POST /api/oauth/token')).toBe(2);
  });

  it('at the authorization endpoint: the browser sees an error page; at --timeout plat finds out, drops it, and the next login registers anew', async () => {
    const first = await registered();
    platform.knobs.unknownClients = [first.clientId];
    const { result, approval } = await login(['--timeout', '2']);
    expect(approval.errors.join('\n')).toMatch(/consent flow stopped at \/oauth\/authorize with HTTP 400/);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/No answer from the browser within 2 s\..*The server no longer accepts plat's registration.*plat dropped the registration: run plat login again/s);
    expectCleanError(result);
    expect((await readProfile(home)).client).toBeUndefined();

    const { result: again, approval: next } = await login();
    expect(again.code, again.stderr).toBe(0);
    expect(param(next.urls[0]!, 'client_id')).not.toBe(first.clientId);
    expect(platform.stats.count('register')).toBe(1);
  });

  it('at the authorization endpoint, ended with Ctrl-C: plat finds out before exiting 130 and drops it', async () => {
    const first = await registered();
    platform.knobs.unknownClients = [first.clientId];
    let started = false;
    const result = await home.run(['login', '--no-browser'], {
      onStderr: (stderr, child) => {
        const url = authorizeUrls(stderr)[0];
        if (!url || started) return;
        started = true;
        // the browser shows an error page instead of the consent page, and the person presses Ctrl-C
        void platform.approve(url).catch(() => child.kill('SIGINT'));
      },
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/warning: The server no longer accepts plat's registration/);
    expect((await readProfile(home)).client).toBeUndefined();
    expect(platform.stats.count('register')).toBe(0);
  });

  it('a profile damaged while plat waited cannot have the registration dropped: a warning says why, and the failure is still explained', async () => {
    // (The next plat login replaces the damaged profile, and with it the refused registration.)
    const first = await registered();
    platform.knobs.unknownClients = [first.clientId];
    let damaged = false;
    const result = await home.run(['login', '--no-browser', '--timeout', '2'], {
      onStderr: (stderr) => {
        if (damaged || !authorizeUrls(stderr)[0]) return;
        damaged = true;
        writeFileSync(profilePath(home), 'garbage\n');
      },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^warning: .*profiles.default\.json is not valid JSON/m);
    expect(result.stderr).toMatch(/^error: No answer from the browser within 2 s\..*The server no longer accepts plat's registration.* Run plat login again to register anew\.$/m);
    expect(result.stderr).not.toMatch(/plat dropped the registration/); // it could not: the warning says why
    expectCleanError(result);
  });

  it('ended with Ctrl-C while the authorization endpoint cannot be asked (it drops the connection, or never answers): exit 130 within seconds, the registration kept', async () => {
    const first = await registered();
    for (const answer of ['drops the connection', 'never answers'] as const) {
      let asked = 0;
      platform.override('/oauth/authorize', (req) => {
        asked++;
        if (answer === 'drops the connection') req.socket.destroy();
        return true;
      });
      let interruptedAt = 0;
      const result = await home.run(['login', '--no-browser'], {
        onStderr: (stderr, child) => {
          if (interruptedAt || !authorizeUrls(stderr)[0]) return;
          interruptedAt = Date.now();
          child.kill('SIGINT');
        },
      });
      expect(result.code, `${answer}: ${result.stderr}`).toBe(130);
      // plat asks the server why no answer came, for at most 1.5 s: no verdict, so nothing is said or dropped.
      expect(Date.now() - interruptedAt, answer).toBeLessThan(3_000);
      expect(asked, answer).toBe(1);
      expect(result.stderr, answer).not.toMatch(/warning|dropped/);
      expect((await readProfile(home)).client.clientId, answer).toBe(first.clientId);
      platform.clearOverrides();
    }
  });

  it('a login with a stored registration that simply times out keeps it', async () => {
    const first = await registered();
    const result = await home.run(['login', '--no-browser', '--timeout', '1']);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/No answer from the browser within 1 s\. Run plat login again/);
    expect(result.stderr).not.toMatch(/dropped/);
    expect((await readProfile(home)).client.clientId).toBe(first.clientId);
  });

  it('at refresh: the session ends with exit 4, the registration is dropped, and the next login registers anew', async () => {
    const first = await registered();
    platform.knobs.unknownClients = [first.clientId];
    const refresh = await home.run(['refresh']);
    expect(refresh.code).toBe(4);
    expect(refresh.stderr).toMatch(/The server no longer recognises plat's registration \(invalid_client.*\), so the session ended\. Run plat login to register anew/);
    expectCleanError(refresh);
    const profile = await readProfile(home);
    expect(profile.loggedIn).toBe(false);
    expect(profile.client).toBeUndefined();
    expect((await home.run(['token'])).code).toBe(4);

    const { result, approval } = await login();
    expect(result.code, result.stderr).toBe(0);
    expect(param(approval.urls[0]!, 'client_id')).not.toBe(first.clientId);
    expect(platform.stats.count('register')).toBe(1);
  });
});

/**
 * What the server assigns wins (RFC 7591 §3.2.1), and a server that offers no public clients gets the confidential
 * client it wants (RFC 8252 §8.4: a per-install secret), kept in the token store like a token.
 */
describe('a registration the server makes confidential', () => {
  it("metadata without 'none': plat registers as a confidential client and uses the secret at the token, refresh and revocation endpoints", async () => {
    platform.knobs.metadataOverrides = { token_endpoint_auth_methods_supported: ['client_secret_post'] };
    const { consent: approval } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(platform.stats.count('register')).toBe(1);
    const profile = await readProfile(home);
    expect(profile.client).toMatchObject({ dynamic: true, authMethod: 'client_secret_post', secretMethod: 'client_secret_post' });
    const session = await readStoredSession(home);
    expect(session.clientSecret).toMatch(/^\S{16,}$/);
    expect(JSON.stringify(profile)).not.toContain(session.clientSecret); // never in the config file
    expect(param(approval.urls[0]!, 'client_id')).toBe(profile.client.clientId);
    // refresh authenticates with the secret (oidc-provider refuses the confidential client without it)
    const refresh = await home.run(['refresh', '--verbose']);
    expect(refresh.code, refresh.stderr).toBe(0);
    expect(refresh.stderr).not.toContain(session.clientSecret); // --verbose redacts it
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    const logout = await home.run(['logout']);
    expect(logout.stdout).toMatch(/the tokens were revoked at the server/);
    // the next login reuses the registration with its kept secret: nothing registered
    platform.stats.reset();
    await signIn(home, platform, ['--scope', 'courses:read']);
    expect(platform.stats.count('register')).toBe(0);
    expect((await readStoredSession(home)).clientSecret).toBe(session.clientSecret);
  });

  it('an answer with another method and a secret than asked, without client_secret_expires_at: plat uses what was assigned', async () => {
    const { confidentialClientId, confidentialClientSecret } = platform.preRegistered;
    platform.override('/api/oauth/register', (req, res) => {
      if (req.method !== 'POST') return false;
      req.resume();
      // 200 instead of 201, the secret without client_secret_expires_at, and client_secret_post where plat asked for none
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: confidentialClientId, client_secret: confidentialClientSecret, token_endpoint_auth_method: 'client_secret_post', redirect_uris: ['http://127.0.0.1/callback'] }));
      return true;
    });
    const { result } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(result.stderr).not.toMatch(/client_secret_expires_at|broke the protocol/);
    expect((await readProfile(home)).client).toMatchObject({ clientId: confidentialClientId, dynamic: true, authMethod: 'client_secret_post' });
    expect((await readStoredSession(home)).clientSecret).toBe(confidentialClientSecret);
    expect((await home.run(['refresh'])).code).toBe(0);
  });

  it('a confidential method without a secret, or a method plat does not speak, is refused with what to do', async () => {
    platform.override('/api/oauth/register', (req, res) => {
      if (req.method !== 'POST') return false;
      req.resume();
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: 'x', token_endpoint_auth_method: 'private_key_jwt' }));
      return true;
    });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/registered plat with the client authentication method private_key_jwt, which plat does not support .*--client-id/);
    expectCleanError(result);
  });
});
