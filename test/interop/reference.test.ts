/**
 * Issue 11's protocol points on the reference platform (oidc-provider), each made visible with a knob: offline_access
 * and a session without a refresh token, the nonce, what registration sends (and a 200 answer), revocation
 * policies (public clients refused, a 400 for a token the server already revoked), and client_secret_basic.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CLOCK_TIME, expectCleanError } from '../helpers/cli.js';
import { approving, param, signIn } from '../helpers/consent.js';
import { readProfile, readStoredSession, tokenPath } from '../helpers/state.js';
import { apiStatus } from '../helpers/login.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

const idTokenClaims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

describe('offline_access (OIDC Core §11)', () => {
  it('is not asked for when the server does not list it, and no prompt is added', async () => {
    const { consent: approval } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(param(approval.urls[0]!, 'scope')).not.toMatch(/offline_access/);
    expect(param(approval.urls[0]!, 'prompt')).toBeNull();
  });

  it('is asked for (with prompt=consent) when listed; the refresh token it brings works', async () => {
    platform.knobs.offlineAccess = true;
    const { result, consent: approval } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(param(approval.urls[0]!, 'scope')!.split(' ')).toContain('offline_access');
    expect(param(approval.urls[0]!, 'prompt')).toBe('consent');
    expect(result.stderr).not.toMatch(/no refresh token/);
    expect((await readStoredSession(home)).refreshToken).toBeTruthy();
    const refreshed = await home.run(['refresh']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
  });

  it('a login that yields no refresh token says when the session ends; refresh tells the truth; the token is used to its end', async () => {
    platform.knobs.offlineAccess = true;
    platform.knobs.grantScopes = (requested) => requested.filter((s) => s !== 'offline_access');
    const { result } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(result.stderr).toMatch(new RegExp(`This server issued no refresh token: the session ends at ${CLOCK_TIME}; run plat login again then\\.`));
    expect((await readStoredSession(home)).refreshToken).toBeUndefined();

    const refresh = await home.run(['refresh']);
    expect(refresh.code).toBe(1);
    expectCleanError(refresh);
    expect(refresh.stderr).toMatch(
      new RegExp(`no refresh token, so plat cannot refresh the session; the access token is still valid for 60 minutes \\(until ${CLOCK_TIME}\\)\\. Run plat login --scope courses:read when it ends\\.`),
    );
    expect(refresh.stderr).not.toMatch(/has expired/);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });

  it('once such a session has ended, every message says so and names plat login', async () => {
    platform.knobs.offlineAccess = true;
    platform.knobs.grantScopes = (requested) => requested.filter((s) => s !== 'offline_access');
    await signIn(home, platform, ['--scope', 'courses:read']);
    // The session's own record of its token's life is moved, not waited for (a 2-second token made the first call
    // race the clock on a busy machine). In its last minute, where a session with a refresh token is renewed early
    // (needsRefresh: the last min(60 s, half its life)), the token is still used: there is nothing to renew it with.
    const session = await readStoredSession(home);
    const now = Date.now();
    await writeFile(tokenPath(home), JSON.stringify({ ...session, obtainedAt: now - 600_000, expiresAt: now + 30_000 }));
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
    // Then its end passes.
    await writeFile(tokenPath(home), JSON.stringify({ ...session, obtainedAt: now - 630_000, expiresAt: now - 1_000 }));
    const refresh = await home.run(['refresh']);
    expect(refresh.code).toBe(4);
    expect(refresh.stderr).toMatch(new RegExp(`The session ended at ${CLOCK_TIME}: this server issued no refresh token, so plat cannot renew it\\. Run plat login --scope courses:read to sign in again\\.`));
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code).toBe(4);
    expect(call.stderr).toMatch(/session ended .*no refresh token/);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });
});

describe('nonce (OIDC Core §3.1.2.1, §15.5.2)', () => {
  it('a fresh nonce goes with every login that asks for openid, and the ID token carries it', async () => {
    const first = await signIn(home, platform);
    const nonce = param(first.consent.urls[0]!, 'nonce');
    expect(nonce).toMatch(/^[\w-]{43}$/);
    expect(idTokenClaims((await readStoredSession(home)).idToken).nonce).toBe(nonce);
    const second = await signIn(home, platform);
    expect(param(second.consent.urls[0]!, 'nonce')).not.toBe(nonce);
  });

  it('an ID token with another nonce is refused (exit 4) and nothing is stored', async () => {
    let seen: string | undefined;
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], {
      onStderr: (stderr) => {
        const match = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(stderr);
        if (!match || seen) return;
        seen = match[1]!;
        // The server is asked with a nonce other than plat's: its ID token answers that request, not plat's.
        const forged = new URL(seen);
        forged.searchParams.set('nonce', 'not-the-nonce-plat-sent');
        void platform.approve(forged.href).then((callback) => fetch(callback).then((r) => r.text()));
      },
    });
    expect(result.code).toBe(4);
    expectCleanError(result);
    expect(result.stderr).toMatch(/The ID token does not carry the nonce plat sent with this login/);
    expect((await readProfile(home).catch(() => ({}) as Record<string, any>)).loggedIn).not.toBe(true);
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
  });

  it('an ID token without a nonce, when plat sent one, is refused (exit 4) and nothing is stored', async () => {
    let seen: string | undefined;
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], {
      onStderr: (stderr) => {
        const match = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(stderr);
        if (!match || seen) return;
        seen = match[1]!;
        // The server is asked without plat's nonce, so its ID token carries none: the nonce is required, not just
        // compared when present (OIDC Core §3.1.3.7).
        const stripped = new URL(seen);
        stripped.searchParams.delete('nonce');
        void platform.approve(stripped.href).then((callback) => fetch(callback).then((r) => r.text()));
      },
    });
    expect(param(seen!, 'nonce')).toBeTruthy();
    expect(result.code).toBe(4);
    expectCleanError(result);
    expect(result.stderr).toMatch(/The ID token lacks the nonce plat sent with this login/);
    expect((await readProfile(home).catch(() => ({}) as Record<string, any>)).loggedIn).not.toBe(true);
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
  });
});

describe('registration (RFC 7591)', () => {
  it('a later login within the registered scopes reuses the registration; one asking for more registers anew', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    await signIn(home, platform);
    expect(platform.stats.count('register')).toBe(1);
    const more = await signIn(home, platform, ['--scope', 'students:read']);
    expect(more.result.stderr).toMatch(/registration does not include students:read; registering again/);
    expect(platform.stats.count('register')).toBe(2);
  });

  it('sends the scopes asked for (and the defaults of a plain login), the grant and response types and application_type native', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const { clientId } = (await readProfile(home)).client;
    const registered = await platform.registeredClient(clientId);
    expect(String(registered?.scope).split(' ').sort()).toEqual(['courses:read', 'email', 'openid', 'profile']);
    expect(registered).toMatchObject({
      // the device grant beside the code grant, where the server offers it: one registration serves both logins
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: ['code'],
      application_type: 'native',
      token_endpoint_auth_method: 'none',
    });
  });

  it('accepts a registration answered with 200 instead of 201', async () => {
    platform.override('/api/oauth/register', async (req, res) => {
      if (req.headers['x-forwarded-by-test']) return false;
      let body = '';
      for await (const chunk of req) body += chunk;
      const upstream = await fetch(`${platform.baseUrl}/api/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-by-test': '1' },
        body,
      });
      const text = await upstream.text();
      expect(upstream.status).toBe(201);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
      return true;
    });
    const { result } = await signIn(home, platform);
    expect(result.code).toBe(0);
    expect((await readProfile(home)).client.dynamic).toBe(true);
  });
});

describe('revocation (RFC 7009, RFC 8414 revocation_endpoint_auth_methods_supported)', () => {
  it('metadata that leaves public clients out of revocation is not taken at its word: plat asks, and the server revokes', async () => {
    platform.knobs.metadataOverrides = { revocation_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'] };
    await signIn(home, platform);
    const { accessToken } = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expectCleanError(result);
    expect(platform.stats.count('POST /api/oauth/revoke')).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/the tokens were revoked at the server/);
    expect(result.stderr).toBe('');
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
    expect(await apiStatus(platform, accessToken, '/api/courses')).toBe(401); // revoked at the server, as said
  });

  it('a 401 from the revocation endpoint is said as the server\'s refusal of the client, with what it answered, not as a server fault', async () => {
    await signIn(home, platform);
    platform.override('/api/oauth/revoke', (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="revocation"' });
      res.end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication required' }));
      return true;
    });
    const result = await home.run(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/The server refused to let plat's client revoke tokens: it answered HTTP 401 \(invalid_client: client authentication required\)\. The tokens stay valid at the server until they expire/);
    expect(result.stderr).not.toMatch(/Try again later|check the base URL/);
    expect(platform.stats.count('POST /api/oauth/revoke')).toBe(1); // the second would meet the same refusal
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
  });

  it('a 400 for the access token after the refresh token revoked both is a success (RFC 7009 §2.2)', async () => {
    platform.knobs.revokeUnknownToken = 'error-400';
    await signIn(home, platform);
    const { accessToken } = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/the tokens were revoked at the server/);
    expect(result.stderr).toBe('');
    expect(platform.stats.count('POST /api/oauth/revoke')).toBe(2);
    expect(await apiStatus(platform, accessToken, '/api/oauth/userinfo')).toBe(401);
  });

  it('a 400 for the first token is still reported: nothing shows it was revoked', async () => {
    await signIn(home, platform);
    platform.override('/api/oauth/revoke', (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_request', error_description: 'broken' }));
      return true;
    });
    const result = await home.run(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Could not revoke .*The server refused to revoke the refresh token \(invalid_request: broken\)/);
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
  });
});

describe('client_secret_basic where the server lists only that secret method', () => {
  const basic = usePlatform({ confidentialAuthMethod: 'client_secret_basic' });

  it('token, refresh and revocation all authenticate with HTTP Basic (oidc-provider holds the client to it)', async () => {
    const { confidentialClientId, confidentialClientSecret } = basic.preRegistered;
    const approval = approving(basic);
    const login = await home.run(['login', '--no-browser', '--base-url', basic.baseUrl, '--client-id', confidentialClientId, '--client-secret-stdin'], {
      stdin: `${confidentialClientSecret}\n`,
      onStderr: approval.onStderr,
    });
    expect(login.code, login.stderr).toBe(0);
    const refreshed = await home.run(['refresh']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(basic.stats.count('token:refresh_token')).toBe(1);
    const { accessToken } = await readStoredSession(home);
    const logout = await home.run(['logout']);
    expect(logout.stdout, logout.stderr).toMatch(/the tokens were revoked at the server/);
    expect(await apiStatus(basic, accessToken, '/api/oauth/userinfo')).toBe(401);
  });
});
