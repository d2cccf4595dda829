/**
 * Several accounts side by side: --profile (or PLAT_PROFILE) on every command, each profile with its own
 * platform, registration and tokens; plat status lists them all; plat logout --all revokes at each server.
 */
import { describe, expect, it } from 'vitest';
import { approving, signIn } from '../../helpers/consent.js';
import { readProfile } from '../../helpers/state.js';
import { apiStatus } from '../../helpers/login.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const school = usePlatform();
const district = usePlatform();
const home = useHome();

describe('two accounts on two platforms', () => {
  it('keeps them apart across every command, lists both, and logs out of both with revocation at each server', async () => {
    await signIn(home, school, ['--profile', 'school', '--scope', 'courses:read']);
    await signIn(home, district, ['--scope', 'courses:read analytics:read'], { PLAT_PROFILE: 'district' });
    expect(school.stats.count('register')).toBe(1);
    expect(district.stats.count('register')).toBe(1);

    const status = JSON.parse((await home.run(['status', '--json', '--profile', 'district'])).stdout);
    const byName = Object.fromEntries(status.profiles.map((p: { profile: string }) => [p.profile, p]));
    expect(Object.keys(byName).sort()).toEqual(['district', 'school']);
    expect(byName.school).toMatchObject({ baseUrl: school.baseUrl, loggedIn: true, current: false, scopes: ['openid', 'profile', 'email', 'courses:read'] });
    expect(byName.district).toMatchObject({ baseUrl: district.baseUrl, loggedIn: true, current: true });
    expect(byName.school.clientId).not.toBe(byName.district.clientId);
    const human = await home.run(['status']);
    expect(human.stdout).toContain(school.baseUrl);
    expect(human.stdout).toContain(district.baseUrl);

    // each profile's calls go to its own platform with its own token
    const schoolToken = (await home.run(['token', '--profile', 'school'])).stdout.trim();
    const districtToken = (await home.run(['token'], { env: { PLAT_PROFILE: 'district' } })).stdout.trim();
    expect(schoolToken).not.toBe(districtToken);
    expect(await apiStatus(school, schoolToken)).toBe(200);
    expect(await apiStatus(district, schoolToken)).toBe(401);
    school.stats.reset();
    district.stats.reset();
    expect((await home.run(['call', 'GET', '/api/analytics', '--profile', 'district'])).code).toBe(0);
    expect((await home.run(['call', 'GET', '/api/analytics', '--profile', 'school'])).code).toBe(5);
    expect(district.stats.count('GET /api/analytics')).toBe(1);
    expect(school.stats.count('GET /api/analytics')).toBe(1);
    expect((await home.run(['whoami', '--profile', 'school', '--json'])).code).toBe(0);
    expect((await home.run(['refresh', '--profile', 'district'])).code).toBe(0);
    expect(district.stats.count('token:refresh_token')).toBe(1);
    expect(school.stats.count('token:refresh_token')).toBe(0);
    // the default profile was never used
    expect((await home.run(['token'])).code).toBe(4);

    const districtTokenNow = (await home.run(['token', '--profile', 'district'])).stdout.trim();
    const logout = await home.run(['logout', '--all']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toMatch(/Logged out \(profile district\); the tokens were revoked/);
    expect(logout.stdout).toMatch(/Logged out \(profile school\); the tokens were revoked/);
    expect(school.stats.count('POST /api/oauth/revoke')).toBe(2);
    expect(district.stats.count('POST /api/oauth/revoke')).toBe(2);
    expect(await apiStatus(school, schoolToken)).toBe(401);
    expect(await apiStatus(district, districtTokenNow)).toBe(401);

    const after = JSON.parse((await home.run(['status', '--json'])).stdout);
    expect(after.profiles.map((p: { loggedIn: boolean }) => p.loggedIn)).toEqual([false, false]);
    // both keep platform and registration: a later login per profile needs no flags and registers nothing
    expect((await readProfile(home, 'school')).client.clientId).toBe(byName.school.clientId);
    school.stats.reset();
    const approval = approving(school);
    const again = await home.run(['login', '--no-browser', '--profile', 'school'], { onStderr: approval.onStderr });
    expect(again.code, again.stderr).toBe(0);
    expect(new URL(approval.urls[0]!).origin).toBe(school.baseUrl);
    expect(school.stats.count('register')).toBe(0);
  });
});
