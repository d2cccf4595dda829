/**
 * Logout and the discovery cache in-process (testContext: captured stdio, a clock the test moves, the real platform
 * and file store): the branches a spawned plat reaches only with effort — a damaged session, a failed revocation,
 * a session that ended on its own — and the cache's hour, reached by moving the clock instead of editing files.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DISCOVERY_TTL_MS, getDiscovery } from '../../../src/session/discovery/discovery-cache.js';
import { logoutProfile } from '../../../src/session/logout.js';
import { signIn } from '../../helpers/consent.js';
import { useTestContexts } from '../../helpers/context.js';
import { useHome, usePlatform } from '../../helpers/platform.js';
import { readProfile, tokenPath } from '../../helpers/state.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

const metadataRequests = () =>
  Object.entries(platform.stats.keys())
    .filter(([key]) => key.startsWith('GET /.well-known/'))
    .reduce((sum, [, n]) => sum + n, 0);

describe('logoutProfile', () => {
  it('revokes the refresh token, then the access token, and forgets the session, keeping platform and client', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const before = await readProfile(home);
    platform.stats.reset();
    const t = open();
    expect(await logoutProfile(t.ctx, 'default', { revoke: true })).toMatchObject({ wasLoggedIn: true, revoked: true, revocationErrors: [] });
    expect(platform.stats.events.filter((e) => e.key.startsWith('revoke:')).map((e) => e.key)).toEqual(['revoke:refresh_token', 'revoke:access_token']);
    await expect(readFile(tokenPath(home))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readProfile(home)).toMatchObject({ loggedIn: false, baseUrl: before.baseUrl, client: before.client });
  });

  it('a revocation the server fails is reported, and the tokens are removed all the same', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.override('/api/oauth/revoke', (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"temporarily_unavailable"}');
      return true;
    });
    const t = open();
    const result = await logoutProfile(t.ctx, 'default', { revoke: true });
    expect(result).toMatchObject({ wasLoggedIn: true, revoked: false });
    expect(result.revocationErrors.length).toBeGreaterThan(0);
    await expect(readFile(tokenPath(home))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await readProfile(home)).loggedIn).toBe(false);
  });

  it('a damaged session cannot be revoked, but is forgotten, and the reason is given', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    await writeFile(tokenPath(home), '{"accessToken": ');
    platform.stats.reset();
    const t = open();
    expect(await logoutProfile(t.ctx, 'default', { revoke: true })).toMatchObject({
      wasLoggedIn: true,
      revoked: false,
      revocationErrors: [expect.stringMatching(/damaged/)],
    });
    expect(platform.stats.count('POST /api/oauth/revoke')).toBe(0);
    await expect(readFile(tokenPath(home))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('without a session: nothing to revoke, nothing asked of the server', async () => {
    const t = open();
    expect(await logoutProfile(t.ctx, 'default', { revoke: true })).toEqual({ profile: 'default', wasLoggedIn: false, revoked: false, revocationErrors: [] });
    expect(platform.stats.count('POST /api/oauth/revoke')).toBe(0);
  });
});

describe('getDiscovery: the cache lasts DISCOVERY_TTL_MS (one hour)', () => {
  it('asks once, answers from the cache until the hour is over, then asks again; refresh always asks', async () => {
    expect(DISCOVERY_TTL_MS).toBe(60 * 60 * 1000);
    const t = open();
    const first = await getDiscovery(t.ctx, platform.baseUrl);
    expect(first.issuer).toBe(platform.issuer);
    const asked = metadataRequests();
    expect(asked).toBeGreaterThan(0);

    t.clock.advance(DISCOVERY_TTL_MS);
    await getDiscovery(t.ctx, platform.baseUrl);
    expect(metadataRequests()).toBe(asked);

    t.clock.advance(1);
    await getDiscovery(t.ctx, platform.baseUrl);
    expect(metadataRequests()).toBe(2 * asked);

    await getDiscovery(t.ctx, platform.baseUrl, { refresh: true });
    expect(metadataRequests()).toBe(3 * asked);
  });

  it('a cache dated in the future (a clock set back) is not trusted', async () => {
    const t = open();
    await getDiscovery(t.ctx, platform.baseUrl);
    const asked = metadataRequests();
    t.clock.advance(-2 * 60_000);
    await getDiscovery(t.ctx, platform.baseUrl);
    expect(metadataRequests()).toBe(2 * asked);
  });
});
