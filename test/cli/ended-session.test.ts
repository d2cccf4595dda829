/**
 * A session that ended without the user's word (the server rejected its refresh token) never turns into anonymous
 * access: a cron job that had personal data yesterday fails today, every time, until a person runs plat login or
 * plat logout. --anonymous stays the explicit way to call without a token.
 */
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { signIn } from '../helpers/consent.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { readProfile, readStoredSession } from '../helpers/state.js';

const platform = usePlatform();
const home = useHome();

/** Signs in with short-lived tokens, then kills the grant at the server, so the next refresh is rejected. */
async function sessionThatWillEnd(profile?: string) {
  platform.knobs.accessTokenTtl = 2;
  await signIn(home, platform, ['--scope', 'courses:read', ...(profile ? ['--profile', profile] : [])]);
  const { refreshToken } = await readStoredSession(home, profile);
  const revoked = await fetch(`${platform.baseUrl}/api/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: refreshToken, client_id: (await readProfile(home, profile)).client.clientId }),
  });
  expect(revoked.status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 2100));
}

describe('a session that ended on its own', () => {
  it('keeps plat call at exit 4 (never anonymous data) until plat logout, which makes anonymous calls the user\'s choice', async () => {
    await sessionThatWillEnd();
    const first = await home.run(['call', 'GET', '/api/courses']);
    expect(first.code, first.stderr).toBe(4);
    expect(first.stderr).toMatch(/refresh token was rejected/);
    for (let i = 0; i < 2; i++) {
      const again = await home.run(['call', 'GET', '/api/courses']);
      expect(again.code, again.stderr).toBe(4);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(new RegExp(`The session of profile default at ${platform.baseUrl.replace(/\./g, '\\.')} ended: the server rejected its refresh token\\. Sign in again with plat login, or run plat logout to use the platform anonymously\\.`));
      expect(again.stderr).not.toMatch(/calling anonymously/);
      expectCleanError(again);
    }
    const explicit = await home.run(['call', 'GET', '/api/courses', '--anonymous']);
    expect(explicit.code, explicit.stderr).toBe(0);

    expect((await home.run(['logout'])).code).toBe(0);
    expect((await readProfile(home)).sessionEnded).toBeUndefined();
    const after = await home.run(['call', 'GET', '/api/courses']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).toMatch(/Not logged in: calling anonymously/);
  });

  it('names the profile in every suggested command, and a new login clears the mark', async () => {
    await sessionThatWillEnd('district');
    await home.run(['call', 'GET', '/api/courses', '--profile', 'district']);
    const again = await home.run(['token', '--profile', 'district']);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('plat login --profile district');
    expect(again.stderr).toContain('plat logout --profile district');
    platform.knobs.accessTokenTtl = 3600;
    await signIn(home, platform, ['--profile', 'district', '--scope', 'courses:read']);
    expect((await readProfile(home, 'district')).sessionEnded).toBeUndefined();
    expect((await home.run(['call', 'GET', '/api/courses', '--profile', 'district'])).code).toBe(0);
  });
});
