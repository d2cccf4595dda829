/**
 * Rules of the session that the rest of the suite did not hold: breaking any of them in src/ left every other test
 * green (issue 15, "blind spots"). Each test here fails when its rule is broken; each was checked by breaking the
 * code and watching it fail.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError, makeHome } from '../helpers/cli.js';
import { approving, signIn } from '../helpers/consent.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { readProfile, readStoredSession, sessionBytes, tokenPath } from '../helpers/state.js';
import { makeUnprivilegedHome } from '../faults/helpers.js';

const school = usePlatform();
const district = usePlatform();
const home = useHome();

const clientIdOf = (authorizeUrl: string) => new URL(authorizeUrl).searchParams.get('client_id');
/** The payload of a JWT, unverified: the tests compare subjects, the signature is plat's business. */
const jwtPayload = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
/** Metadata requests (RFC 9728, RFC 8414, OIDC discovery) the platform answered. */
const metadataRequests = () =>
  Object.entries(school.stats.keys())
    .filter(([key]) => key.startsWith('GET /.well-known/'))
    .reduce((sum, [, n]) => sum + n, 0);

describe('a registration belongs to the server that made it', () => {
  it('a profile that moves to another server registers there instead of presenting the first server\'s client', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    const schoolClient = (await readProfile(home)).client;
    expect(schoolClient).toMatchObject({ issuer: school.issuer, dynamic: true });

    const consent = approving(district);
    const moved = await home.run(['login', '--no-browser', '--base-url', district.baseUrl, '--timeout', '15'], { onStderr: consent.onStderr });
    expect(moved.code, `${moved.stderr}\n${consent.errors.join('\n')}`).toBe(0);
    expect(district.stats.count('register')).toBe(1);
    expect(clientIdOf(consent.url!)).not.toBe(schoolClient.clientId);
    const profile = await readProfile(home);
    expect(profile.client).toMatchObject({ issuer: district.issuer, dynamic: true });
    expect(profile.client.clientId).not.toBe(schoolClient.clientId);
  });
});

describe('logout revokes the refresh token, then the access token', () => {
  it('each revocation request carries a different token: the refresh token and the access token', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    school.stats.reset();
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(school.stats.count('revoke:refresh_token')).toBe(1);
    expect(school.stats.count('revoke:access_token')).toBe(1);
    expect(school.stats.count('revoke:unknown')).toBe(0);
    // refresh token first: revoking it ends the grant, so a stolen access token cannot be renewed meanwhile
    const order = school.stats.events.filter((e) => e.key.startsWith('revoke:')).map((e) => e.key);
    expect(order).toEqual(['revoke:refresh_token', 'revoke:access_token']);
  });
});

describe('UserInfo must name the user the ID token names (OIDC Core §5.3.2)', () => {
  // UserInfo is asked only for tokens not bound to the API: an API publishing no RFC 9728 document.
  beforeEach(() => {
    school.knobs.protectedResourceMetadata = 'missing';
  });
  const impostor = () =>
    school.override('/api/oauth/userinfo', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sub: 'user-mallory', name: 'Mallory', email: 'mallory@example.test' }));
      return true;
    });

  it('login keeps the ID token\'s user, not UserInfo\'s other one, and says so', async () => {
    impostor();
    const { result } = await signIn(home, school, ['--scope', 'openid profile email']);
    expect(result.stderr).toMatch(/different user than the one who signed in/);
    expectCleanError(result);
    const idTokenSub = jwtPayload((await readStoredSession(home)).idToken).sub;
    expect(idTokenSub).toBe('user-ada');
    const profile = await readProfile(home);
    expect(profile.user.sub).toBe(idTokenSub);
    expect(JSON.stringify(profile.user)).not.toMatch(/mallory/i);
    expect(result.stdout).not.toMatch(/mallory/i);
  });

  it('whoami refuses a UserInfo answer about someone else', async () => {
    await signIn(home, school, ['--scope', 'openid profile email']);
    impostor();
    const result = await home.run(['whoami']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*different user than the one who signed in/m);
    expect(result.stdout).toBe('');
    expectCleanError(result);
  });
});

describe('PLAT_TOKEN wins over a stored session', () => {
  it('the API sees the PLAT_TOKEN token, not the stored one, and plat token prints it', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    const stored = (await readStoredSession(home)).accessToken as string;
    // A second, equally valid token of the same user: only the Authorization header tells them apart.
    const elsewhere = await makeHome();
    let fromEnv: string;
    try {
      await signIn(elsewhere, school, ['--scope', 'courses:read']);
      fromEnv = (await readStoredSession(elsewhere)).accessToken;
    } finally {
      await elsewhere.cleanup();
    }
    expect(fromEnv).not.toBe(stored);

    const seen: string[] = [];
    school.override('/api/echo', (req) => {
      seen.push(String(req.headers.authorization));
      return false; // observed only; the API answers as usual
    });
    const call = await home.run(['call', 'GET', '/api/echo'], { env: { PLAT_TOKEN: fromEnv } });
    expect(call.code, call.stderr).toBe(0);
    expect(seen).toEqual([`Bearer ${fromEnv}`]);
    expect((await home.run(['token'], { env: { PLAT_TOKEN: fromEnv } })).stdout).toBe(`${fromEnv}\n`);
  });
});

describe('a refresh answered without a refresh_token keeps the one plat has (RFC 6749 §6)', () => {
  it('stores the new access token beside the old refresh token, which then refreshes again', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    const before = await readStoredSession(home);
    school.knobs.rotateRefreshTokens = false;

    const first = await home.run(['refresh']);
    expect(first.code, first.stderr).toBe(0);
    const after = await readStoredSession(home);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).toBe(before.refreshToken);

    const second = await home.run(['refresh']);
    expect(second.code, second.stderr).toBe(0);
    expect(school.stats.count('token:refresh_token')).toBe(2);
    expect((await readStoredSession(home)).refreshToken).toBe(before.refreshToken);
  });
});

describe('the discovery cache lasts one hour', () => {
  async function ageCache(minutes: number) {
    const dir = path.join(home.configDir, 'cache');
    const [file] = (await readdir(dir)).filter((f) => f.startsWith('discovery-'));
    expect(file, 'a discovery cache file').toBeDefined();
    const cached = JSON.parse(await readFile(path.join(dir, file!), 'utf8'));
    cached.fetchedAt = Date.now() - minutes * 60_000;
    await writeFile(path.join(dir, file!), JSON.stringify(cached));
  }

  it('uses metadata fetched 59 minutes ago without asking, and asks again once it is 61 minutes old', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    await ageCache(59);
    school.stats.reset();
    expect((await home.run(['refresh'])).code).toBe(0);
    expect(metadataRequests()).toBe(0);

    await ageCache(61);
    school.stats.reset();
    expect((await home.run(['refresh'])).code).toBe(0);
    expect(metadataRequests()).toBeGreaterThan(0);
  });
});

describe('login stores the tokens before the profile that points to them', () => {
  it('a token write that fails during a re-login to another server leaves the previous profile byte for byte', async () => {
    const h = await makeUnprivilegedHome();
    try {
      await signIn(h, school, ['--scope', 'courses:read']);
      const before = await sessionBytes(h);
      expect(JSON.parse(before.profile!)).toMatchObject({ baseUrl: school.baseUrl, loggedIn: true });
      await h.readOnly(path.dirname(tokenPath(h)));

      const consent = approving(district);
      const result = await h.run(['login', '--no-browser', '--base-url', district.baseUrl, '--timeout', '15'], { onStderr: consent.onStderr });
      expect(consent.errors).toEqual([]);
      expect(consent.callbacks).toHaveLength(1); // consent happened: the failure is the write after it
      expect(result.code, result.stderr).not.toBe(0);
      expect(result.stderr).toMatch(/^error: /m);
      expectCleanError(result);
      await h.writable(path.dirname(tokenPath(h)));
      expect(await sessionBytes(h)).toEqual(before);
    } finally {
      await h.cleanup();
    }
  });
});
