/**
 * SIGKILL at any point of a login or a refresh: what is left on disk is one usable session or cleanly none, never
 * a torn file or a profile that disagrees with its tokens; and the next plat command works from it.
 *
 * The moments come from the server: an override lets each response through and, when it has been sent, the test
 * kills plat at once or a few milliseconds later (a spread that walks through processing the response, reading
 * UserInfo, taking the lock and writing the two files). A lock left behind by a killed holder is aged past the
 * stale period (what 10 s of waiting would do; the real wait is tested in concurrency.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeHome, platBin, type Home } from '../helpers/cli.js';
import { approving, AUTHORIZE_URL, signIn } from '../helpers/consent.js';
import { exists, listFiles, lockPath, profilePath, readState } from '../helpers/state.js';
import { classifyRaw, expectConsistent, expectFailure, expectSuccess, makeUnprivilegedHome, sleep, type Consistency, type RawState } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();

/** Starts plat; resolves when it has exited (killed or not). */
function start(h: Home, args: string[]): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; stderr: () => string } {
  const child = spawn(process.execPath, [platBin, ...args], { env: h.env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stderr: () => stderr };
}

/** Kills `child` `delayMs` after the response to the first request under `path` has been sent. */
function killAfterResponse(path: string, child: () => ChildProcess | undefined, delayMs: number, match: (url: string) => boolean = () => true) {
  let armed = true;
  platform.override(path, (req, res) => {
    if (armed && match(req.url ?? '')) {
      armed = false;
      res.on('finish', () => {
        const kill = () => child()?.kill('SIGKILL');
        if (delayMs === 0) kill();
        else setTimeout(kill, delayMs);
      });
    }
    return false;
  });
}

/** A lock a killed process held: age it past the stale period, as 10 s of waiting would. */
async function ageLeftoverLock(h: Home): Promise<boolean> {
  if (!(await exists(lockPath(h)))) return false;
  const old = new Date(Date.now() - 60_000);
  await utimes(lockPath(h), old, old);
  return true;
}

/**
 * After a kill: whole files, and the next commands either use the session or say there is none. A state of being
 * killed between the two writes is repaired by the next command that reads the session (status), and a session no
 * profile points to is removed by plat logout. Returns what was left and what it became.
 */
async function expectRecoverable(h: Home): Promise<Consistency> {
  await ageLeftoverLock(h);
  const raw = await classifyRaw(h);
  rawStates.add(raw);
  // status lists whatever is there: exit 0 when logged in, 4 when not (or no profile at all), never a crash
  const status = await h.run(['status', '--json']);
  if (status.code === 0) expectSuccess(status);
  else expectFailure(status, 4, /not logged in|No profiles yet/, { stdout: true });
  if (raw === 'uncommitted') {
    expectFailure(await h.run(['token']), 4, /Not logged in/);
    expectSuccess(await h.run(['logout']));
  }
  // Temporary files of a killed write may remain until plat next writes that file (checked after that).
  const state = await expectConsistent(h, 'default', undefined, { allowTemp: true });
  const call = await h.run(['call', 'GET', '/api/courses', '--base-url', platform.baseUrl]);
  if (state === 'logged-in' && call.code === 4) {
    // The access token had expired and the refresh token stored was spent by the killed process: the session
    // ends cleanly, as it must.
    expectFailure(call, 4, /run plat login/i);
    expect(await expectConsistent(h, 'default', undefined, { allowTemp: true })).toBe('logged-out');
    return 'logged-out';
  }
  expectSuccess(call);
  expect(JSON.parse(call.stdout).anonymous).toBe(state !== 'logged-in');
  if (state !== 'logged-in') expectFailure(await h.run(['token']), 4, /Not logged in/);
  return state;
}

/** Every raw state the kills produced, reported at the end (the spread is meant to reach the in-between ones). */
const rawStates = new Set<RawState>();
afterAll(() => {
  console.log(`kill.test.ts: states left by SIGKILL: ${[...rawStates].sort().join(', ')}`);
});

/** Runs `plat login` approving consent; `kill` arms the moment. Returns the state it left. */
async function killedLogin(h: Home, arm: (child: () => ChildProcess | undefined) => void): Promise<{ state: Consistency; killed: boolean }> {
  let proc: ReturnType<typeof start> | undefined;
  arm(() => proc?.child);
  proc = start(h, ['login', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:read']);
  let approved = false;
  const approving = (async () => {
    for (;;) {
      const match = AUTHORIZE_URL.exec(proc!.stderr());
      if (match && !approved) {
        approved = true;
        try {
          const callback = await platform.approve(match[1]!);
          await fetch(callback).then((r) => r.text()).catch(() => undefined);
        } catch {
          // killed before or during consent
        }
        return;
      }
      if (proc!.child.exitCode !== null || proc!.child.signalCode !== null) return;
      await sleep(5);
    }
  })();
  const exit = await proc.exited;
  await approving;
  platform.clearOverrides();
  if (exit.signal === null) expect(exit.code, proc.stderr()).toBe(0);
  return { state: await expectRecoverable(h), killed: exit.signal === 'SIGKILL' };
}

describe('SIGKILL during plat login', () => {
  it.each([
    ['the protected-resource metadata', '/.well-known/oauth-protected-resource'],
    ['the authorization server metadata', '/.well-known/oauth-authorization-server'],
    ['the registration', '/api/oauth/register'],
    ['the consent redirect', '/interaction/'],
    ['the token response', '/api/oauth/token'],
    ['the UserInfo response', '/api/oauth/userinfo'],
  ])('killed right after %s: nothing or a whole session is stored, and login works again', async (_what, path) => {
    // UserInfo is asked only for tokens not bound to the API: an API publishing no RFC 9728 document.
    if (path === '/api/oauth/userinfo') platform.knobs.protectedResourceMetadata = 'missing';
    const outcome = await killedLogin(home, (child) => killAfterResponse(path, child, 0));
    expect(outcome.killed).toBe(true);
    // Killed before the tokens were stored: nothing is (the profile, if any, is not logged in).
    if (path !== '/api/oauth/userinfo') expect(outcome.state).not.toBe('logged-in');
    await signIn(home, platform, ['--scope', 'courses:read']);
    expect(await expectConsistent(home)).toBe('logged-in');
    expectSuccess(await home.run(['refresh']));
  });

  it('killed at 16 moments spread over exchanging the code, reading UserInfo and storing: always consistent', async () => {
    const states: Consistency[] = [];
    // 0..15 ms, then further out until a login outlives its kill (a slow machine needs longer to get there).
    const delays = [...Array.from({ length: 16 }, (_, i) => i), 25, 40, 70, 120, 250, 500];
    for (const delay of delays) {
      if (delay >= 16 && states.includes('logged-in')) break;
      // A first login each time (a fresh config dir): the case with no earlier profile to fall back on.
      const fresh = await makeHome();
      try {
        const outcome = await killedLogin(fresh, (child) => killAfterResponse('/api/oauth/token', child, delay));
        states.push(outcome.state);
        await signIn(fresh, platform, ['--scope', 'courses:read']);
        expect(await expectConsistent(fresh)).toBe('logged-in');
      } finally {
        await fresh.cleanup();
      }
    }
    // The spread reaches both sides of the commit point.
    expect(states).toContain('logged-in');
    expect(states.some((s) => s !== 'logged-in')).toBe(true);
  }, scaled(90_000));

  it('a step-up login killed at 10 moments after its token response leaves the old session or the new one', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const scopesSeen = new Set<string>();
    for (let delay = 0; delay < 10; delay++) {
      const before = (await readState(home)).session!;
      let proc: ReturnType<typeof start> | undefined;
      killAfterResponse('/api/oauth/token', () => proc?.child, delay);
      proc = start(home, ['login', '--no-browser', '--add-scope', delay % 2 ? 'students:read' : 'orders:read']);
      let done = false;
      const approving = (async () => {
        while (!done) {
          const match = AUTHORIZE_URL.exec(proc!.stderr());
          if (match) {
            const callback = await platform.approve(match[1]!).catch(() => undefined);
            if (callback) await fetch(callback).then((r) => r.text()).catch(() => undefined);
            return;
          }
          await sleep(5);
        }
      })();
      await proc.exited;
      done = true;
      await approving;
      platform.clearOverrides();
      const state = await expectRecoverable(home);
      // Killed in the middle of a step-up: still signed in, with the old session or the whole new one.
      expect(state).toBe('logged-in');
      const after = (await readState(home)).session!;
      if (after.accessToken === before.accessToken) expect(after).toEqual(before);
      scopesSeen.add(after.scopes.join(' '));
      // The session that is left can be refreshed (it is not a refresh token of one session beside another's client).
      const refresh = await home.run(['refresh']);
      if (refresh.code !== 0) {
        expectFailure(refresh, 4, /run plat login/i);
        await signIn(home, platform, ['--scope', 'courses:read']);
      }
    }
    expect(scopesSeen.size).toBeGreaterThan(0);
  }, scaled(60_000));
});

describe('SIGKILL during plat refresh', () => {
  /** Runs `plat refresh` (or a call that refreshes), killed `delayMs` after the token response. */
  async function killedRefresh(args: string[], delayMs: number) {
    const before = (await readState(home)).session!;
    let proc: ReturnType<typeof start> | undefined;
    killAfterResponse('/api/oauth/token', () => proc?.child, delayMs);
    proc = start(home, args);
    const exit = await proc.exited;
    platform.clearOverrides();
    if (exit.signal === null) expect(exit.code, proc.stderr()).toBe(0);
    // The session is one write: the old one untouched, or wholly the new one.
    const left = (await readState(home)).session!;
    const rotated = left.refreshToken !== before.refreshToken;
    if (rotated) {
      expect(left.accessToken).not.toBe(before.accessToken);
      expect(left.obtainedAt).toBeGreaterThan(before.obtainedAt);
    } else {
      expect(left).toEqual(before);
    }
    const state = await expectRecoverable(home);
    // Killed after the server rotated but before plat stored the result, the stored refresh token is spent: the
    // next refresh says so (exit 4, run plat login) and ends the session cleanly. Otherwise it works.
    if (state === 'logged-in') {
      const next = await home.run(['refresh']);
      if (next.code !== 0) {
        expect(rotated).toBe(false);
        expectFailure(next, 4, /run plat login/i);
      }
    }
    if ((await expectConsistent(home)) !== 'logged-in') {
      await signIn(home, platform, ['--scope', 'courses:read']);
      expect(await expectConsistent(home)).toBe('logged-in');
    }
    return { killed: exit.signal === 'SIGKILL', rotated };
  }

  it('plat refresh killed at 12 moments after the token response: the old session or the new one, never a mix', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const outcomes: Array<{ killed: boolean; rotated: boolean }> = [];
    for (const delay of [...Array.from({ length: 12 }, (_, i) => i), 25, 50, 100, 250, 500]) {
      if (delay >= 12 && outcomes.some((o) => o.rotated)) break;
      outcomes.push(await killedRefresh(['refresh'], delay));
    }
    expect(outcomes.some((o) => o.killed)).toBe(true);
    expect(outcomes.some((o) => o.rotated)).toBe(true);
  }, scaled(60_000));

  it('plat call refreshing an expired token, killed at 5 moments after the token response', async () => {
    platform.knobs.accessTokenTtl = 1;
    await signIn(home, platform, ['--scope', 'courses:read']);
    for (let delay = 0; delay < 5; delay++) {
      await sleep(1_100);
      await killedRefresh(['call', 'GET', '/api/courses'], delay * 3);
    }
  }, scaled(60_000));

  it('plat refresh killed at 8 moments from its start (before and while taking the lock and reading)', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    for (let delay = 0; delay < 8; delay++) {
      const before = (await readState(home)).session!;
      const proc = start(home, ['refresh']);
      await sleep(20 + delay * 15);
      proc.child.kill('SIGKILL');
      await proc.exited;
      expect(await expectRecoverable(home)).toBe('logged-in');
      const after = (await readState(home)).session!;
      if (after.refreshToken === before.refreshToken) expect(after).toEqual(before);
      const next = await home.run(['refresh']);
      if (next.code !== 0) {
        expectFailure(next, 4, /run plat login/i);
        await signIn(home, platform, ['--scope', 'courses:read']);
      }
    }
  }, scaled(60_000));
});

describe('what a killed write leaves behind, made on purpose', () => {
  it('a first login whose profile cannot be written (after the tokens were stored) rolls the tokens back', async () => {
    // The profiles directory becomes read-only for plat (running unprivileged) once the token response is out: the
    // tokens are stored, then the profile fails. Nothing may be left that no profile points to.
    const h = await makeUnprivilegedHome();
    try {
      platform.override('/api/oauth/token', (_req, res) => {
        res.on('finish', () => chmodSync(path.join(h.configDir, 'profiles'), 0o500));
        return false;
      });
      const approval = approving(platform, { firstOnly: true });
      const login = await h.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: approval.onStderr });
      expectFailure(login, 1, /Cannot write .*profiles.default\.json: permission denied\. Fix its permissions/);
      expect(platform.stats.count('token:authorization_code')).toBe(1);
      await h.writable(path.join(h.configDir, 'profiles'));
      platform.clearOverrides();
      expect(await expectConsistent(h)).toBe('absent');
      expect(await listFiles(path.join(h.configDir, 'tokens'))).toEqual([]);
      await signIn(h, platform);
      expect(await expectConsistent(h)).toBe('logged-in');
    } finally {
      await h.cleanup();
    }
  });

  it('a session no profile points to (a first login killed between its two writes) is not used, and plat logout removes it', async () => {
    await mkdir(path.join(home.configDir, 'tokens'), { recursive: true });
    const orphan = { accessToken: 'orphan-access-token-0123456789', refreshToken: 'orphan-refresh-token-0123456789', tokenType: 'Bearer', obtainedAt: Date.now(), expiresAt: Date.now() + 3_600_000, scopes: ['openid'] };
    await writeFile(path.join(home.configDir, 'tokens', 'default.json'), JSON.stringify(orphan), { mode: 0o600 });
    expect(await classifyRaw(home)).toBe('uncommitted');
    expectFailure(await home.run(['token']), 4, /Not logged in/);
    const status = await home.run(['status', '--json']);
    expectFailure(status, 4, /No profiles yet/, { stdout: true });
    expect(JSON.parse(status.stdout).profiles).toEqual([]);
    const logout = await home.run(['logout']);
    expectSuccess(logout);
    expect(logout.stdout).toMatch(/Not logged in; nothing to do/);
    expect(await listFiles(home.configDir)).toEqual([]);
  });

  it('a profile whose copies lag its session (killed between the writes) is repaired by the next command', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const profile = JSON.parse(await readFile(profilePath(home), 'utf8'));
    await writeFile(profilePath(home), JSON.stringify({ ...profile, expiresAt: profile.expiresAt - 3_600_000, scopes: ['openid'] }));
    expect(await classifyRaw(home)).toBe('stale-copies');
    const status = await home.run(['status', '--json']);
    expectSuccess(status);
    expect(JSON.parse(status.stdout).profiles[0].scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);
    expect(await expectConsistent(home)).toBe('logged-in');
    // and plat scopes, which reads only the profile, shows the session's scopes again
    expect(JSON.parse((await home.run(['scopes', '--json'])).stdout).scopes.filter((s: { granted: boolean }) => s.granted).map((s: { name: string }) => s.name)).toEqual(['openid', 'profile', 'email', 'courses:read']);
  });

  it('a profile that still says logged in over a deleted session (killed while logging out) is repaired', async () => {
    await signIn(home, platform);
    await rm(path.join(home.configDir, 'tokens', 'default.json'));
    expect(await classifyRaw(home)).toBe('flag-without-session');
    expectFailure(await home.run(['token']), 4, /Not logged in/);
    expect(await expectConsistent(home)).toBe('logged-out');
  });

  it('the temporary file of a killed write (it can hold a whole session) is removed by the next write, and by logout', async () => {
    await signIn(home, platform);
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => dead.once('exit', resolve));
    const session = await readFile(path.join(home.configDir, 'tokens', 'default.json'), 'utf8');
    const tokenTemp = path.join(home.configDir, 'tokens', `.default.json.${dead.pid}.lx2abc.k3j4h5g6.tmp`);
    const profileTemp = path.join(home.configDir, 'profiles', `.default.json.${dead.pid}.lx2abc.k3j4h5g6.tmp`);
    await writeFile(tokenTemp, session, { mode: 0o600 });
    await writeFile(profileTemp, '{"name":', { mode: 0o600 });
    // A temporary file of a live process is its business: left alone.
    const live = path.join(home.configDir, 'tokens', `.default.json.${process.pid}.lx2abc.k3j4h5g6.tmp`);
    await writeFile(live, 'in progress', { mode: 0o600 });
    expectSuccess(await home.run(['refresh']));
    expect(await exists(tokenTemp)).toBe(false);
    expect(await exists(profileTemp)).toBe(false);
    expect(await exists(live)).toBe(true);
    await rm(live);
    await writeFile(tokenTemp, session, { mode: 0o600 });
    expectSuccess(await home.run(['logout', '--no-revoke']));
    expect(await exists(tokenTemp)).toBe(false);
    expect(await expectConsistent(home)).toBe('logged-out');
  });
});

