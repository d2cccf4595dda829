/**
 * The session's token logic in-process (testContext: captured stdio, a clock the test moves, the real platform,
 * the real file store and lock): each branch of getAccessToken, loadSession and refreshSession, and plat call's
 * refresh before use, reached by calling them rather than by spawning plat. The session itself is made by a real
 * `plat login`.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { run as call } from '../../../../src/commands/call/call.js';
import { AuthError, NetworkError } from '../../../../src/errors.js';
import { loadSession } from '../../../../src/session/tokens/access.js';
import { refreshSession } from '../../../../src/session/tokens/refresh.js';
import { bindSession, getAccessToken } from '../../../../src/session/profile/binding.js';
import { loadProfile } from '../../../../src/session/profile/profile.js';
import { signIn } from '../../../helpers/consent.js';
import { useTestContexts, type TestContext } from '../../../helpers/context.js';
import { useHome, usePlatform } from '../../../helpers/platform.js';
import { profilePath, readProfile, readStoredSession, tokenPath } from '../../../helpers/state.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

/** The invocation's stored session, its profile worked out first as the binding works it out. */
async function storedSession(ctx: TestContext['ctx']) {
  return loadSession(ctx, await loadProfile(ctx));
}

async function signedIn(env: Record<string, string | undefined> = {}): Promise<TestContext> {
  await signIn(home, platform, ['--scope', 'courses:read']);
  platform.stats.reset();
  return open({ env });
}

describe('getAccessToken and bindSession', () => {
  it('hands out the stored token while it is fresh, and refreshes once it is inside the margin', async () => {
    const { ctx, clock, stderr } = await signedIn();
    const stored = await readStoredSession(home);
    const fresh = await getAccessToken(ctx);
    expect(fresh).toMatchObject({ kind: 'session', token: stored.accessToken });
    expect(platform.stats.count('token:refresh_token')).toBe(0);

    clock.advance(stored.expiresAt - clock.now() - 59_000); // one hour later, 59 s before expiry
    const renewed = await getAccessToken(ctx);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    const now = await readStoredSession(home);
    expect(renewed.token).toBe(now.accessToken);
    expect(now.accessToken).not.toBe(stored.accessToken);
    expect(now.refreshToken).not.toBe(stored.refreshToken);
    expect((await readProfile(home)).expiresAt).toBe(now.expiresAt);
    expect(stderr()).toBe('');
  });

  it('PLAT_TOKEN wins over the stored session without reading it', async () => {
    const { ctx } = await signedIn({ PLAT_TOKEN: '  token-from-the-environment  ' });
    await rm(tokenPath(home)); // were the store read, this session would be found missing and the profile repaired
    expect(await getAccessToken(ctx)).toMatchObject({ kind: 'env', token: 'token-from-the-environment' });
    expect((await readProfile(home)).loggedIn).toBe(true);
  });

  it('without PLAT_TOKEN or a session: no binding, and "Not logged in" with the command to run', async () => {
    const t = open();
    expect(await bindSession(t.ctx)).toMatchObject({ kind: 'none', reason: 'not-logged-in' });
    await expect(getAccessToken(t.ctx)).rejects.toThrow(AuthError);
    await expect(getAccessToken(t.ctx)).rejects.toThrow(/^Not logged in\. Run: plat login --base-url <url>$/);
    // With the platform named (--base-url), the command to run names it.
    const named = open({ globals: { baseUrl: platform.baseUrl } });
    await expect(getAccessToken(named.ctx)).rejects.toThrow(`Not logged in. Run: plat login --base-url ${platform.baseUrl}`);
  });
});

describe('plat call', () => {
  it('refreshes an expiring token before use and stores the rotated refresh token', async () => {
    const { ctx, clock, stdout } = await signedIn();
    const before = await readStoredSession(home);
    clock.advance(before.expiresAt - clock.now() + 1_000); // past its expiry, without waiting for it
    await call(ctx, 'GET', '/api/courses', {});
    expect(JSON.parse(stdout()).anonymous).toBe(false);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    const after = await readStoredSession(home);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
  });
});

describe('bindSession: a session belongs to its platform, and an ended one is not replaced', () => {
  it('a profile signed in elsewhere gives no token for the platform named by --base-url, and says which one it is for', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const t = open({ globals: { baseUrl: 'http://127.0.0.1:9' } });
    expect(await bindSession(t.ctx)).toMatchObject({ kind: 'none', reason: 'other-platform', baseUrl: 'http://127.0.0.1:9' });
    await expect(getAccessToken(t.ctx)).rejects.toThrow(`Profile default is signed in to ${platform.baseUrl}, not to http://127.0.0.1:9`);
  });

  it('the profile it suggests for the other platform is one no profile has: host-port, else the first free host-port-N', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const t = open({ globals: { baseUrl: 'http://127.0.0.1:9' } });
    expect(await bindSession(t.ctx)).toMatchObject({ elsewhere: { holders: [], newProfile: 'host-9' } });
    // Taken by a profile, even a damaged one: never suggested, so following the hint moves nothing.
    await writeFile(profilePath(home, 'host-9'), '{}');
    await writeFile(profilePath(home, 'host-9-2'), 'not JSON');
    expect(await bindSession(t.ctx)).toMatchObject({ elsewhere: { holders: [], newProfile: 'host-9-3' } });
    await expect(getAccessToken(t.ctx)).rejects.toThrow(/No profile is signed in there; sign in to it under a profile of its own: plat login --profile host-9-3 --base-url http:\/\/127\.0\.0\.1:9$/);
  });

  it('a session that ended without the user\'s word stays ended: no anonymous fallback, and the way out named', async () => {
    const { ctx } = await signedIn();
    const session = await readStoredSession(home);
    await writeFile(tokenPath(home), JSON.stringify({ ...session, refreshToken: 'not-a-refresh-token-the-server-issued' }));
    await expect(refreshSession(ctx, (await storedSession(ctx))!, { onlyIfUnchanged: false })).rejects.toThrow(AuthError);
    expect(await bindSession(ctx)).toMatchObject({ kind: 'none', reason: 'ended' });
    await expect(getAccessToken(ctx)).rejects.toThrow(/The session of profile default at .* ended: .*Sign in again with plat login --scope courses:read, or run plat logout/);
  });
});

describe('loadSession: the token store is the truth', () => {
  it('a profile whose copies lag the session (killed between the two writes) is answered from the session and repaired', async () => {
    const { ctx } = await signedIn();
    const profile = await readProfile(home);
    await writeFile(profilePath(home), JSON.stringify({ ...profile, expiresAt: 1, scopes: ['stale'] }));
    const active = await storedSession(ctx);
    const session = await readStoredSession(home);
    expect(active?.profile).toMatchObject({ expiresAt: session.expiresAt, scopes: session.scopes });
    expect(await readProfile(home)).toMatchObject({ expiresAt: session.expiresAt, scopes: session.scopes });
  });

  it('a profile that says logged in over a session that is gone is logged out, keeping its platform and client', async () => {
    const { ctx } = await signedIn();
    const before = await readProfile(home);
    await rm(tokenPath(home));
    expect(await storedSession(ctx)).toBeUndefined();
    const after = await readProfile(home);
    expect(after).toMatchObject({ loggedIn: false, baseUrl: before.baseUrl, client: before.client });
    expect(after.user).toBeUndefined();
  });
});

describe('refreshSession', () => {
  it('a rejected refresh token (invalid_grant) ends the session, keeping the registration', async () => {
    const { ctx } = await signedIn();
    const session = await readStoredSession(home);
    const { client } = await readProfile(home);
    await writeFile(tokenPath(home), JSON.stringify({ ...session, refreshToken: 'not-a-refresh-token-the-server-issued' }));
    const active = (await storedSession(ctx))!;
    await expect(refreshSession(ctx, active, { onlyIfUnchanged: false })).rejects.toThrow(/refresh token was rejected\). Run plat login/);
    await expect(readFile(tokenPath(home))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readProfile(home)).toMatchObject({ loggedIn: false, client });
  });

  it('a registration the server forgot (invalid_client) ends the session and forgets the registration', async () => {
    const { ctx } = await signedIn();
    const { clientId } = (await readProfile(home)).client;
    Object.assign(platform.knobs, { unknownClients: [clientId], unknownClientsAt: 'token' });
    const active = (await storedSession(ctx))!;
    await expect(refreshSession(ctx, active, { onlyIfUnchanged: false })).rejects.toThrow(
      /no longer recognises plat's registration \(invalid_client.*\), so the session ended\. Run plat login to register anew/,
    );
    const profile = await readProfile(home);
    expect(profile.loggedIn).toBe(false);
    expect(profile.client).toBeUndefined();
  });

  it('a network failure keeps the session for the next try', async () => {
    const { ctx } = await signedIn();
    const before = await readFile(tokenPath(home), 'utf8');
    platform.override('/api/oauth/token', (req) => {
      req.socket.destroy();
      return true;
    });
    const active = (await storedSession(ctx))!;
    await expect(refreshSession(ctx, active, { onlyIfUnchanged: false })).rejects.toBeInstanceOf(NetworkError);
    expect(await readFile(tokenPath(home), 'utf8')).toBe(before);
    expect((await readProfile(home)).loggedIn).toBe(true);
  });

  it('onlyIfUnchanged: a session another process rotated meanwhile is used as is, without a second refresh', async () => {
    const { ctx } = await signedIn();
    const stale = (await storedSession(ctx))!;
    await refreshSession(open().ctx, stale, { onlyIfUnchanged: false }); // "another process" rotates
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    const result = await refreshSession(ctx, stale, { onlyIfUnchanged: true });
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect(result.session.accessToken).toBe((await readStoredSession(home)).accessToken);
    expect(result.session.accessToken).not.toBe(stale.session.accessToken);
  });
});
