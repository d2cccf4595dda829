/**
 * A session that ended without the user's word (the server rejected its refresh token) never turns into anonymous
 * access: a cron job that had personal data yesterday fails today, every time, until a person runs plat login or
 * plat logout. --anonymous stays the explicit way to call without a token.
 *
 * In-process (testContext): plat's clock is moved past the access token's expiry, so the next call refreshes, where
 * a spawned plat needed a two-second token and a real wait. Each step is a command's run function on a fresh
 * context, as a fresh process would have; what the binary prints for an ended session is checked in
 * test/cli/session.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { run as call } from '../../../../src/commands/call/call.js';
import { run as logout } from '../../../../src/commands/auth/logout.js';
import { run as token } from '../../../../src/commands/auth/token.js';
import { signIn } from '../../../helpers/consent.js';
import { expectPlatError, useTestContexts, type TestContext, type TestContextOptions } from '../../../helpers/context.js';
import { useHome, usePlatform } from '../../../helpers/platform.js';
import { readProfile, readStoredSession } from '../../../helpers/state.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

/** Signs in, then kills the grant at the server, so the next refresh is rejected; returns how far to move plat's clock for that refresh to happen. */
async function sessionThatWillEnd(profile?: string): Promise<number> {
  await signIn(home, platform, ['--scope', 'courses:read', ...(profile ? ['--profile', profile] : [])]);
  const { refreshToken, expiresAt } = await readStoredSession(home, profile);
  const revoked = await fetch(`${platform.baseUrl}/api/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: refreshToken, client_id: (await readProfile(home, profile)).client.clientId }),
  });
  expect(revoked.status).toBe(200);
  return expiresAt - Date.now() + 60_000;
}

/** A context whose clock is `ahead` ms in the future. */
function later(ahead: number, options: TestContextOptions = {}): TestContext {
  const t = open(options);
  t.clock.advance(ahead);
  return t;
}

describe('a session that ended on its own', () => {
  it('keeps plat call at exit 4 (never anonymous data) until plat logout, which makes anonymous calls the user\'s choice', async () => {
    const ahead = await sessionThatWillEnd();
    const first = later(ahead);
    await expectPlatError(first, () => call(first.ctx, 'GET', '/api/courses', {}), 4, /refresh token was rejected/);
    for (let i = 0; i < 2; i++) {
      const again = later(ahead);
      await expectPlatError(
        again,
        () => call(again.ctx, 'GET', '/api/courses', {}),
        4,
        new RegExp(`The session of profile default at ${platform.baseUrl.replace(/\./g, '\\.')} ended: the server rejected its refresh token\\. Sign in again with plat login --scope courses:read, or run plat logout to use the platform anonymously\\.`),
      );
      expect(again.stderr()).not.toMatch(/calling anonymously/);
    }
    const explicit = later(ahead);
    await call(explicit.ctx, 'GET', '/api/courses', { anonymous: true });

    await logout(later(ahead).ctx, { revoke: true });
    expect((await readProfile(home)).sessionEnded).toBeUndefined();
    const after = later(ahead);
    await call(after.ctx, 'GET', '/api/courses', {});
    expect(after.stderr()).toMatch(/Not logged in: calling anonymously/);
  });

  it('names the profile in every suggested command, and a new login clears the mark', async () => {
    const ahead = await sessionThatWillEnd('district');
    const district: TestContextOptions = { globals: { profile: 'district', profileSource: 'option' } }; // --profile district
    const first = later(ahead, district);
    await expectPlatError(first, () => call(first.ctx, 'GET', '/api/courses', {}), 4, /refresh token was rejected/);
    const again = later(ahead, district);
    const error = await expectPlatError(again, () => token(again.ctx), 4, /plat login --profile district/);
    expect(error.message).toContain('plat logout --profile district');
    await signIn(home, platform, ['--profile', 'district', '--scope', 'courses:read']);
    expect((await readProfile(home, 'district')).sessionEnded).toBeUndefined();
    const after = open(district);
    await call(after.ctx, 'GET', '/api/courses', {});
    expect(JSON.parse(after.stdout())).toMatchObject({ anonymous: false });
  });
});
