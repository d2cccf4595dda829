/** `plat token`: the bare token, the documented --json shape, and --min-ttl (refresh first, exit 4 if impossible). */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError, makeHome, type Home } from '../helpers/cli.js';
import { startPlatform, type Platform } from '../platform/index.mjs';

let platform: Platform;
let home: Home;

beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(async () => {
  await platform.close();
});
beforeEach(async () => {
  platform.clearOverrides();
  platform.knobs.accessTokenTtl = 3600;
  platform.stats.reset();
  home = await makeHome();
});
afterEach(async () => {
  await home.cleanup();
});

async function loggedIn(ttlSeconds = 3600) {
  platform.knobs.accessTokenTtl = ttlSeconds;
  const result = await home.login(platform, ['--scope', 'courses:read']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

async function tokenJson(args: string[] = []) {
  const result = await home.run(['token', '--json', ...args]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('plat token --json', () => {
  it('prints exactly the documented members, with an RFC 3339 expiry that agrees with expires_in', async () => {
    await loggedIn();
    const before = Date.now();
    const json = await tokenJson();
    expect(Object.keys(json).sort()).toEqual(['access_token', 'base_url', 'expires_at', 'expires_in', 'profile', 'scopes', 'token_type']);
    expect(json).toMatchObject({ token_type: 'Bearer', profile: 'default', base_url: platform.baseUrl });
    expect(json.scopes).toEqual(expect.arrayContaining(['openid', 'courses:read']));
    expect(json.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const expiresIn = json.expires_in as number;
    expect(Number.isInteger(expiresIn)).toBe(true);
    expect(expiresIn).toBeGreaterThan(3500);
    expect(expiresIn).toBeLessThanOrEqual(3600);
    expect(Math.abs(Date.parse(json.expires_at as string) - (before + expiresIn * 1000))).toBeLessThan(10_000);
    // The same token the bare form prints, and one the API accepts.
    const bare = await home.run(['token']);
    expect(bare.stdout).toBe(`${json.access_token}\n`);
    const api = await fetch(`${platform.baseUrl}/api/courses`, { headers: { authorization: `Bearer ${json.access_token}` } });
    expect(await api.json()).toMatchObject({ anonymous: false, sub: 'user-ada' });
  });

  it('names the profile it came from', async () => {
    platform.knobs.accessTokenTtl = 3600;
    const login = await home.login(platform, ['--profile', 'work']);
    expect(login.code, login.stderr).toBe(0);
    const json = await tokenJson(['--profile', 'work']);
    expect(json).toMatchObject({ profile: 'work', base_url: platform.baseUrl });
  });

  it('with PLAT_TOKEN: the given token, nulls where plat cannot know, the base URL given', async () => {
    const result = await home.run(['token', '--json'], { env: { PLAT_TOKEN: 'ci-token-value', PLAT_BASE_URL: platform.baseUrl } });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      access_token: 'ci-token-value',
      token_type: 'Bearer',
      expires_at: null,
      expires_in: null,
      scopes: null,
      profile: null,
      base_url: platform.baseUrl,
    });
  });

  it("another platform than the session's: exit 4 naming the session's origin, no token printed", async () => {
    await loggedIn();
    const result = await home.run(['token', '--json', '--base-url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`is signed in to ${platform.baseUrl}`);
  });

  it('not logged in: exit 4, nothing on stdout', async () => {
    const result = await home.run(['token', '--json']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Not logged in\. Run: plat login/);
    expectCleanError(result);
  });
});

describe('plat token --min-ttl', () => {
  it('a token that lasts long enough is printed as is, without a refresh', async () => {
    await loggedIn(3600);
    const before = await tokenJson();
    const after = await tokenJson(['--min-ttl', '600']);
    expect(after.access_token).toBe(before.access_token);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });

  it('a token that would expire sooner is refreshed first, and the new one lasts', async () => {
    await loggedIn(300);
    const before = await tokenJson();
    platform.knobs.accessTokenTtl = 3600;
    const after = await tokenJson(['--min-ttl', '900']);
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.expires_in as number).toBeGreaterThanOrEqual(900);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    // The refreshed session is the stored one from now on.
    expect((await home.run(['token'])).stdout).toBe(`${after.access_token}\n`);
  });

  it('parallel callers that both need a longer token cause one refresh', async () => {
    await loggedIn(300);
    platform.knobs.accessTokenTtl = 3600;
    const [a, b] = await Promise.all([home.run(['token', '--min-ttl', '900']), home.run(['token', '--min-ttl', '900'])]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
  });

  it('exit 4 when the server cannot give a token that lasts that long; the session stays usable', async () => {
    await loggedIn(300);
    const result = await home.run(['token', '--min-ttl', '3600']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/lasts \d+ s, less than the 3600 s asked for/);
    expectCleanError(result);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    const plain = await home.run(['token']);
    expect(plain.code, plain.stderr).toBe(0);
  });

  it('a value that is not a whole number of seconds is a usage error', async () => {
    await loggedIn();
    for (const bad of ['0', '-5', '1.5', 'ten']) {
      const result = await home.run(['token', '--min-ttl', bad]);
      expect(result.code, bad).toBe(2);
      expect(result.stderr).toMatch(/--min-ttl must be a whole number/);
      expect(result.stdout).toBe('');
    }
  });
});
