/**
 * Profiles a person can manage (issue 17): `plat switch` keeps a current profile that --profile and PLAT_PROFILE
 * still override; `plat status <profile>` shows one and exits 4 when a listed profile is not logged in (or its
 * token is refused); `plat logout --forget` deletes a profile; a mistyped profile name is exit 2 with the closest
 * existing name for every command but login; logout with the revocation endpoint out of reach warns once.
 */
import { access, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { signIn } from '../helpers/consent.js';
import { readProfile } from '../helpers/state.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const school = usePlatform();
const district = usePlatform();
const home = useHome();

const exists = (file: string) => access(file).then(() => true, () => false);

describe('plat switch', () => {
  it('makes a profile current for later commands; --profile and PLAT_PROFILE still win for one command', async () => {
    await signIn(home, school, ['--profile', 'school']);
    await signIn(home, district, ['--profile', 'district']);

    const switched = await home.run(['switch', 'school']);
    expect(switched.code, switched.stderr).toBe(0);
    expect(switched.stdout).toBe(`Switched to profile school (${school.baseUrl}, Ada Lovelace <ada@example.test>).\n`);
    expect((await readFile(path.join(home.configDir, 'current-profile'), 'utf8')).trim()).toBe('school');

    const whoami = await home.run(['whoami', '--json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect((await home.run(['token'])).stdout.trim()).toBe((await home.run(['token', '--profile', 'school'])).stdout.trim());
    const status = JSON.parse((await home.run(['status', '--json'])).stdout);
    expect(status.profiles.filter((p: { current: boolean }) => p.current).map((p: { profile: string }) => p.profile)).toEqual(['school']);

    // one command elsewhere, without moving the choice
    const other = JSON.parse((await home.run(['status', '--json', '--profile', 'district'])).stdout);
    expect(other.profiles.find((p: { current: boolean }) => p.current).profile).toBe('district');
    const fromEnv = JSON.parse((await home.run(['status', '--json'], { env: { PLAT_PROFILE: 'district' } })).stdout);
    expect(fromEnv.profiles.find((p: { current: boolean }) => p.current).profile).toBe('district');
    expect((await readFile(path.join(home.configDir, 'current-profile'), 'utf8')).trim()).toBe('school');

    // a suggestion for the default profile now has to name it, since a bare command would act on school
    const logout = await home.run(['logout', '--profile', 'default']);
    expect(logout.code).toBe(0);
    const whoamiDefault = await home.run(['whoami', '--profile', 'default']);
    expect(whoamiDefault.code).toBe(4);
    expect(whoamiDefault.stderr).toMatch(/plat login --profile default/);

    // a current profile deleted by hand: commands say so, with both ways out; status still lists what there is
    await rm(path.join(home.configDir, 'profiles', 'school.json'));
    const gone = await home.run(['whoami']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/There is no profile school \(the current one, chosen with plat switch\)\. .*or choose another: plat switch <profile>/);
    const listing = await home.run(['status', '--json']);
    expect(JSON.parse(listing.stdout).profiles.map((p: { profile: string }) => p.profile)).toEqual(['district']);

    // back to the default: the choice is removed
    expect((await home.run(['switch', 'default'])).code).toBe(0);
    expect(await exists(path.join(home.configDir, 'current-profile'))).toBe(false);
  });

  it('refuses a profile that does not exist (exit 2, the closest name), and warns when PLAT_PROFILE overrides it', async () => {
    await signIn(home, school, ['--profile', 'school']);
    const typo = await home.run(['switch', 'schol']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/There is no profile schol\. Did you mean school\?/);
    expect(await exists(path.join(home.configDir, 'current-profile'))).toBe(false);

    const shadowed = await home.run(['switch', 'school'], { env: { PLAT_PROFILE: 'default' } });
    expect(shadowed.code).toBe(0);
    expect(shadowed.stderr).toMatch(/PLAT_PROFILE=default is set in this environment and still wins over plat switch/);
  });
});

describe('a mistyped profile name', () => {
  it('is exit 2 with the closest existing name for every command but login, and nothing is created', async () => {
    await signIn(home, school, ['--profile', 'school']);
    const commands = [
      ['logout'],
      ['whoami'],
      ['token'],
      ['refresh'],
      ['call', 'GET', '/api/courses'],
      ['scopes'],
      ['status', 'schol'],
    ];
    for (const args of commands) {
      const result = await home.run(args[0] === 'status' ? args : [...args, '--profile', 'schol']);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/There is no profile schol\. Did you mean school\? To create it, sign in: plat login --profile schol/);
      expect(result.stdout).toBe('');
      expectCleanError(result);
    }
    const env = await home.run(['whoami'], { env: { PLAT_PROFILE: 'schol' } });
    expect(env.code).toBe(2);
    const status = await home.run(['status', '--profile', 'schol']);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/Did you mean school\?/);
    expect(await exists(path.join(home.configDir, 'profiles', 'schol.json'))).toBe(false);

    // login creates profiles: a new name is not a typo there
    await signIn(home, school, ['--profile', 'schol']);
    expect(await exists(path.join(home.configDir, 'profiles', 'schol.json'))).toBe(true);
  });
});

describe('plat status', () => {
  it('shows one profile with <profile>, and exits 4 only for the profile asked about (or the current one)', async () => {
    await signIn(home, school, ['--profile', 'school']);
    await signIn(home, district, ['--profile', 'district']);
    const one = await home.run(['status', 'school']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain(school.baseUrl);
    expect(one.stdout).not.toContain(district.baseUrl);

    expect((await home.run(['logout', '--profile', 'district'])).code).toBe(0);
    // The current profile (default) was never created: the listing is printed, and it is what the exit code is about.
    const all = await home.run(['status']);
    expect(all.code).toBe(4);
    expect(all.stdout).toContain(district.baseUrl); // the listing is still printed in full
    expect(all.stderr).toMatch(/The current profile default does not exist, so it is not logged in\. Choose one of those listed with plat switch <profile>/);
    // With school current, district being logged out is shown, not turned into the exit code (issue 24).
    expect((await home.run(['switch', 'school'])).code).toBe(0);
    const listing = await home.run(['status']);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stdout).toMatch(/district\n(.*\n)*?\s*Logged in\s+no/);
    expect((await home.run(['status', '--profile', 'district'])).code).toBe(4);
    expect((await home.run(['status', 'school'])).code).toBe(0);
    expect((await home.run(['status', 'district'])).code).toBe(4);
  });

  it('exits 4 with --check when the server refuses the token', async () => {
    school.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    await signIn(home, school, ['--profile', 'school']);
    const token = (await home.run(['token', '--profile', 'school'])).stdout.trim();
    // The token stops working at the server (revoked elsewhere), while plat still holds it.
    await fetch(`${school.baseUrl}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: (await readProfile(home, 'school')).client.clientId }),
    });
    expect((await home.run(['status', 'school'])).code).toBe(0);
    const checked = await home.run(['status', 'school', '--check']);
    expect(checked.code).toBe(4);
    expect(checked.stderr).toMatch(/The server refused the token of profile school\. Run: plat login --profile school/);
  });

  it('exits 4 when there are no profiles at all', async () => {
    const result = await home.run(['status']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('error: No profiles yet. Run: plat login --base-url <url>\n');
  });
});

describe('plat logout --forget', () => {
  it('revokes, then deletes the profile (registration included) and the current-profile choice', async () => {
    await signIn(home, school, ['--profile', 'school']);
    expect((await home.run(['switch', 'school'])).code).toBe(0);
    const result = await home.run(['logout', '--forget']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Logged out \(profile school\); the tokens were revoked at the server\.\nForgot profile school/);
    expect(await exists(path.join(home.configDir, 'profiles', 'school.json'))).toBe(false);
    expect(await exists(path.join(home.configDir, 'tokens', 'school.json'))).toBe(false);
    expect(await exists(path.join(home.configDir, 'current-profile'))).toBe(false);
    // gone: the name is now unknown, and a new login registers anew
    expect((await home.run(['whoami', '--profile', 'school'])).code).toBe(2);
    school.stats.reset();
    await signIn(home, school, ['--profile', 'school']);
    expect(school.stats.count('register')).toBe(1);
  });

  it('--profile X keeps the current-profile choice when another profile is current', async () => {
    await signIn(home, school, ['--profile', 'kept-current']);
    await signIn(home, district, ['--profile', 'forgotten-other']);
    expect((await home.run(['switch', 'kept-current'])).code).toBe(0);
    const result = await home.run(['logout', '--forget', '--profile', 'forgotten-other']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Forgot profile forgotten-other/);
    expect((await readFile(path.join(home.configDir, 'current-profile'), 'utf8')).trim()).toBe('kept-current');
    const status = JSON.parse((await home.run(['status', '--json'])).stdout);
    expect(status.profiles.filter((p: { current: boolean }) => p.current).map((p: { profile: string }) => p.profile)).toEqual(['kept-current']);
  });

  it('--json says forgotten', async () => {
    await signIn(home, school, ['--profile', 'old']);
    const result = await home.run(['logout', '--forget', '--profile', 'old', '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ profile: 'old', wasLoggedIn: true, forgotten: true });
  });
});

describe('logout with the revocation endpoint out of reach', () => {
  it('warns once, not once per token', async () => {
    await signIn(home, school);
    school.override('/api/oauth/revoke', (req) => {
      req.socket.destroy();
      return true;
    });
    const result = await home.run(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr.match(/warning:/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/Could not revoke the tokens of profile default at the server: .* They were removed from this machine anyway\./);
  });
});
