/**
 * Issue 24, "a second week with plat": several profiles on two platforms, cron and CI, gh habits. Each test runs
 * the command as the user typed it, and a hint plat prints is pasted and run.
 */
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { approving, signIn } from '../helpers/consent.js';
import { keyring } from '../helpers/components.js';
import { readProfile } from '../helpers/state.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const school = usePlatform();
const district = usePlatform();
const home = useHome();

/** The words of a `plat …` command quoted in a message, as a person would paste them (without the leading plat). */
function pasted(text: string, pattern: RegExp): string[] {
  const match = pattern.exec(text);
  if (!match) throw new Error(`no hint matching ${pattern} in:\n${text}`);
  return match[1]!.trim().split(/\s+/).slice(1);
}

describe('sessions that must not be lost or misdirected', () => {
  describe.skipIf(keyring.skip)(keyring.title('PLAT_TOKEN_STORE=file on a keychain profile'), () => {
    const noBus = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', DISPLAY: undefined };

    it('from cron (no session bus): exit 4 naming the move, the profile untouched; the move works and the job then runs', async () => {
      keyring.require();
      await signIn(home, school, ['--scope', 'courses:read'], { PLAT_TOKEN_STORE: undefined });
      expect((await readProfile(home)).tokenStore).toBe('keychain');

      // What cron meets: no keychain. Not "logged out": exit 4, said, and nothing changed.
      const cron = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: undefined, ...noBus } });
      expect(cron.code).toBe(4);
      expect(cron.stdout).toBe('');
      expect(cron.stderr).toMatch(/The OS keychain is not available \(.+\), and profile default keeps its session there: this run cannot use it, and the profile is unchanged\./);
      expectCleanError(cron);
      // The cron hint of old: PLAT_TOKEN_STORE=file. It must not log the profile out either.
      const withFile = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: 'file', ...noBus } });
      expect(withFile.code).toBe(4);
      expect((await home.run(['whoami'], { env: { PLAT_TOKEN_STORE: 'file', ...noBus } })).code).toBe(4);
      const profile = await readProfile(home);
      expect(profile.loggedIn).toBe(true);
      expect(profile.tokenStore).toBe('keychain');

      // The keychain is back: the session is still there.
      const back = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: undefined } });
      expect(back.code, back.stderr).toBe(0);
      expect(JSON.parse(back.stdout).anonymous).toBe(false);

      // The hint, pasted where the keychain works, moves the session once, said as such.
      const hint = /move the session to a 0600 file once, from a shell where the keychain works: PLAT_TOKEN_STORE=file (plat [^—]+) —/.exec(cron.stderr);
      expect(hint).not.toBeNull();
      const moved = await home.run(pasted(cron.stderr, /works: PLAT_TOKEN_STORE=file (plat [^—]+) —/), { env: { PLAT_TOKEN_STORE: 'file' } });
      expect(moved.code, moved.stderr).toBe(0);
      expect(moved.stderr).toMatch(/Moved the session of profile default from the OS keychain to .*tokens \(mode 0600\), as PLAT_TOKEN_STORE=file asks/);
      expect((await readProfile(home)).tokenStore).toBe('file');

      // The cron job now runs without a keychain.
      const job = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: 'file', ...noBus } });
      expect(job.code, job.stderr).toBe(0);
      expect(JSON.parse(job.stdout).anonymous).toBe(false);
      expect(job.stderr).toBe('');
      // And without PLAT_TOKEN_STORE the profile reads its store, the file, so nothing is lost either.
      expect((await home.run(['token'], { env: { PLAT_TOKEN_STORE: undefined, ...noBus } })).code).toBe(0);
    });
  });

  it('PLAT_BASE_URL=$A plat call --profile b: the flag and the environment disagree, so plat says so and stops (exit 2)', async () => {
    await signIn(home, district, ['--profile', 'b', '--scope', 'courses:read']);
    const result = await home.run(['call', '--profile', 'b', 'GET', '/api/courses'], { env: { PLAT_BASE_URL: school.baseUrl } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: --profile b is for ${district.baseUrl}, but PLAT_BASE_URL names ${school.baseUrl}. Unset PLAT_BASE_URL to use the profile, or pass --base-url to say which platform you mean.\n`,
    );
    for (const args of [['token', '--profile', 'b'], ['whoami', '--profile', 'b'], ['op', '--profile', 'b']]) {
      expect((await home.run(args, { env: { PLAT_BASE_URL: school.baseUrl } })).code).toBe(2);
    }
    // Agreeing is fine, and the explicit --base-url is the user's word on which platform.
    expect((await home.run(['token', '--profile', 'b'], { env: { PLAT_BASE_URL: district.baseUrl } })).code).toBe(0);
  });

  it('--base-url naming the platform exactly one other profile is signed in to uses that profile, and says so', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    await signIn(home, district, ['--profile', 'x', '--scope', 'courses:read']);
    const call = await home.run(['call', '--base-url', district.baseUrl, 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);
    expect(call.stderr).toBe(`Using profile x, signed in to ${district.baseUrl}.\n`);
    const token = await home.run(['token', '--base-url', district.baseUrl]);
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toBe((await home.run(['token', '--profile', 'x'])).stdout.trim());
    // default's session is untouched
    expect((await readProfile(home)).baseUrl).toBe(school.baseUrl);
  });

  it('--base-url naming a platform several profiles are signed in to names them (exit 2)', async () => {
    await signIn(home, school);
    await signIn(home, district, ['--profile', 'x']);
    await signIn(home, district, ['--profile', 'y']);
    const result = await home.run(['token', '--base-url', district.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: Profiles x, y are all signed in to ${district.baseUrl}: choose one with --profile (for example --profile x).\n`);
  });

  it('--base-url naming a platform no profile is signed in to: the suggested login makes a new profile, and never moves this one', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    const token = await home.run(['token', '--base-url', district.baseUrl]);
    expect(token.code).toBe(4);
    const login = pasted(token.stderr, /under a profile of its own: (plat login .*)$/m);
    const fresh = `host-${new URL(district.baseUrl).port}`;
    expect(login).toEqual(['login', '--profile', fresh, '--base-url', district.baseUrl]);
    const consent = approving(district);
    const signedIn = await home.run([...login, '--no-browser'], { onStderr: consent.onStderr });
    expect(signedIn.code, signedIn.stderr).toBe(0);
    // The pasted login left default where it was, and --base-url now finds the new profile.
    expect((await readProfile(home)).baseUrl).toBe(school.baseUrl);
    expect((await readProfile(home)).loggedIn).toBe(true);
    const again = await home.run(['token', '--base-url', district.baseUrl]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe(`Using profile ${fresh}, signed in to ${district.baseUrl}.\n`);
  });

  it('plat status: a logged-out profile is shown but the exit code is about the current one', async () => {
    await signIn(home, school);
    await signIn(home, district, ['--profile', 'old']);
    expect((await home.run(['logout', '--profile', 'old'])).code).toBe(0);
    const status = await home.run(['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toBe('');
    expect(status.stdout).toMatch(/^old\n(.*\n)*?.*Logged in\s+no$/m);
    expect((await home.run(['status', '--json'])).code).toBe(0);
    expect((await home.run(['status', 'old'])).code).toBe(4);
    expect((await home.run(['status', '--profile', 'old'])).code).toBe(4);
    expect((await home.run(['logout'])).code).toBe(0);
    expect((await home.run(['status'])).code).toBe(4);
  });

  it('plat status --check says what was checked and when, and shows the expiry of the token it checked', async () => {
    school.knobs.accessTokenTtl = 2;
    await signIn(home, school);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const result = await home.run(['status', '--check']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Check\s+the token works: the server's UserInfo endpoint accepted it .* \(\d{4}-\d\d-\d\dT[\d:.]+Z\), after refreshing it/);
    expect(result.stdout).not.toMatch(/expired .* ago/);
  });
});

describe('CI and non-interactive runs', () => {
  it('CI=true plat login --base-url X </dev/null fails at once (exit 4) with the ways that work, registering nothing', async () => {
    const started = Date.now();
    const result = await home.run(['login', '--base-url', school.baseUrl], { env: { CI: 'true', DISPLAY: undefined, WAYLAND_DISPLAY: undefined }, stdinDevNull: true });
    expect(result.code).toBe(4);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.stderr).toMatch(/^error: This login cannot finish here: nobody can approve it \(.+\), so plat did not start it\. For CI and jobs, pass a token in PLAT_TOKEN/);
    expect(result.stderr).toContain(`plat login --base-url ${school.baseUrl} --no-browser --port 8765 and ssh -L 8765:127.0.0.1:8765`);
    expect(school.stats.count('register')).toBe(0);
    expectCleanError(result);
    // The same on a desktop with CI set: nobody watches a runner's browser.
    expect((await home.run(['login', '--base-url', school.baseUrl], { env: { CI: 'true', DISPLAY: ':0' }, stdinDevNull: true })).code).toBe(4);
  });

  it('what can still finish is not refused: a pipe to paste into, or a forwarded --port', async () => {
    // stdin a pipe: the address can be pasted (test/login covers the paste itself); it waits, then times out.
    const piped = await home.run(['login', '--no-browser', '--base-url', school.baseUrl, '--timeout', '1'], { env: { CI: 'true' } });
    expect(piped.stderr).toMatch(/No answer from the browser within 1 s/);
    const forwarded = await home.run(['login', '--no-browser', '--port', String(40_000 + Math.floor(Math.random() * 20_000)), '--base-url', school.baseUrl, '--timeout', '1'], { env: { CI: 'true' }, stdinDevNull: true });
    expect(forwarded.stderr).toMatch(/No answer from the browser within 1 s/);
  });
});
