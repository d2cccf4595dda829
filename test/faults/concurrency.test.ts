/**
 * Parallel plat processes on one profile. The reference platform rotates refresh tokens (each is single-use) and
 * counts every refresh and every replay of a used refresh token; the profile lock must make N parallel callers
 * cause exactly one refresh, and parallel login/logout/refresh must leave one consistent session.
 */
import { spawn } from 'node:child_process';
import { mkdir, utimes } from 'node:fs/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/store/lock.js';
import { platBin, type Home, type PlatResult } from '../helpers/cli.js';
import { keyring } from '../helpers/components.js';
import { approving, signIn } from '../helpers/consent.js';
import { exists, lockPath, readState } from '../helpers/state.js';
import { expectConsistent, expectFailure, expectSuccess, sleep, until, type Consistency } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();

/** Signs in with a one-second access token, lets it expire at the server too, and resets the counters. */
async function expiredSession(h: Home, env: Record<string, string | undefined> = {}) {
  platform.knobs.accessTokenTtl = 1;
  await signIn(h, platform, ['--scope', 'courses:read'], env);
  // Tokens issued from now on live an hour: the one refresh must be enough for every caller.
  platform.knobs.accessTokenTtl = 3600;
  await sleep(1100);
  platform.stats.reset();
}

async function parallelCalls(h: Home, n: number, env: Record<string, string | undefined> = {}): Promise<PlatResult[]> {
  return Promise.all(Array.from({ length: n }, () => h.run(['call', 'GET', '/api/courses'], { env, timeoutMs: scaled(60_000) })));
}

describe('N parallel plat call with an expired token and single-use refresh tokens', () => {
  it.each([2, 8, 32])('N = %i: every call succeeds as the user, with exactly one refresh and no replay', async (n) => {
    await expiredSession(home);
    const before = (await readState(home)).session!;
    const results = await parallelCalls(home, n);
    for (const result of results) {
      expectSuccess(result);
      expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
      expect(result.stderr).toBe('');
    }
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect(platform.stats.count('refresh-replay')).toBe(0);
    expect(platform.stats.count('GET /api/courses')).toBe(n);
    expect(await expectConsistent(home)).toBe('logged-in');
    const after = (await readState(home)).session!;
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(await exists(lockPath(home))).toBe(false);
  });

  describe.skipIf(keyring.skip)(keyring.title('with the session in the real keychain'), () => {
    beforeEach(() => keyring.require());

    it('N = 8 with PLAT_TOKEN_STORE unset (keychain): one refresh, no replay, every call succeeds', async () => {
      const env = { PLAT_TOKEN_STORE: undefined };
      await expiredSession(home, env);
      const results = await parallelCalls(home, 8, env);
      for (const result of results) {
        expectSuccess(result);
        expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: false });
      }
      expect(platform.stats.count('token:refresh_token')).toBe(1);
      expect(platform.stats.count('refresh-replay')).toBe(0);
      expect((await readState(home)).profile!.tokenStore).toBe('keychain');
      expect((await home.run(['logout'], { env })).code).toBe(0);
    });
  });
});

describe('parallel login, logout, refresh and call on one profile', () => {
  /** Reads the stored state the way plat does: holding the profile's lock, so a reader sees whole updates only. */
  async function sampleUnderLock(h: Home): Promise<Consistency> {
    // A login that has not reached its lock yet may be checking that it can write (a temporary file): allowed here,
    // not after the round.
    return withProfileLock(h.configDir, 'default', async () => expectConsistent(h, 'default', undefined, { allowTemp: true }));
  }

  it('always leaves one consistent session, never deadlocks and never replays a refresh token (5 rounds of 10)', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.stats.reset();
    const seen = new Set<Consistency>();
    let sampling = true;
    const sampler = (async () => {
      let samples = 0;
      while (sampling) {
        seen.add(await sampleUnderLock(home));
        samples++;
        await sleep(15);
      }
      return samples;
    })();

    const outcomes: Array<{ op: string; result: PlatResult }> = [];
    for (let round = 0; round < 5; round++) {
      const ops = ['login', 'refresh', 'logout', 'call', 'login', 'refresh', 'token', 'logout', 'login', 'refresh'];
      const runs = ops.map(async (op) => {
        let result: PlatResult;
        if (op === 'login') {
          const approval = approving(platform, { firstOnly: true });
          result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:read'], { onStderr: approval.onStderr, timeoutMs: scaled(60_000) });
        } else if (op === 'call') {
          result = await home.run(['call', 'GET', '/api/courses'], { timeoutMs: scaled(60_000) });
        } else {
          result = await home.run([op], { timeoutMs: scaled(60_000) });
        }
        outcomes.push({ op, result });
      });
      await Promise.all(runs);
      seen.add(await expectConsistent(home));
    }
    sampling = false;
    const samples = await sampler;

    for (const { op, result } of outcomes) {
      // refresh and token find the session gone when a logout won the race, and so does a call whose token a
      // logout revoked while it was in flight (its refresh finds no session): exit 4, cleanly. Nothing else fails.
      if ((op === 'refresh' || op === 'token' || op === 'call') && result.code === 4) {
        expectFailure(result, 4, /Not logged in|run plat login/i);
        continue;
      }
      expectSuccess(result);
      expect(result.stderr, op).not.toMatch(/lock/i);
    }
    expect(outcomes.filter((o) => o.op === 'login').every((o) => o.result.code === 0)).toBe(true);
    expect(platform.stats.count('refresh-replay')).toBe(0);
    expect(samples).toBeGreaterThan(5);
    expect(seen.has('logged-in')).toBe(true);
    expect(await exists(lockPath(home))).toBe(false);
    // Whatever the last operation was, what is stored works (or is cleanly absent).
    const final = await expectConsistent(home);
    const token = await home.run(['token']);
    if (final === 'logged-in') expectSuccess(token);
    else expectFailure(token, 4, /Not logged in/);
  }, scaled(120_000));
});

describe('the profile lock', () => {
  it('is taken over when its holder was killed (SIGKILL) while refreshing, after the stale period (~10 s)', async () => {
    await signIn(home, platform);
    // The first refresh request is swallowed: the process holds the lock and waits for an answer.
    let arrived = false;
    platform.override('/api/oauth/token', () => {
      arrived = true;
      return true;
    });
    const child = spawn(process.execPath, [platBin, 'refresh'], { env: home.env as NodeJS.ProcessEnv, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await until(() => arrived, 'the refresh request');
    expect(await exists(lockPath(home))).toBe(true);
    child.kill('SIGKILL');
    await exited;
    platform.clearOverrides();
    expect(await exists(lockPath(home))).toBe(true); // left behind: nobody released it

    const started = Date.now();
    const result = await home.run(['refresh'], { timeoutMs: scaled(40_000) });
    const waited = Date.now() - started;
    expectSuccess(result);
    // It waited for the lock to go stale instead of ignoring it, and took it over well before its own 30 s limit.
    expect(waited).toBeGreaterThan(4_000);
    expect(waited).toBeLessThan(25_000);
    expect(await expectConsistent(home)).toBe('logged-in');
    expect(await exists(lockPath(home))).toBe(false);
    expect(platform.stats.count('refresh-replay')).toBe(0);
  }, scaled(60_000));

  it('a lock left by a process that died long ago is taken over at once', async () => {
    await signIn(home, platform);
    await mkdir(lockPath(home), { recursive: true });
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath(home), old, old);
    const started = Date.now();
    expectSuccess(await home.run(['refresh']));
    expect(Date.now() - started).toBeLessThan(scaled(3_000, { under: 9_000 }));
    expect(await exists(lockPath(home))).toBe(false);
  });

  it('a live holder makes a second refresh wait for it, not fail (and the second uses the rotated session)', async () => {
    await signIn(home, platform);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding = withProfileLock(home.configDir, 'default', () => held);
    const second = home.run(['refresh'], { timeoutMs: scaled(40_000) });
    await sleep(1_500);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
    release();
    await holding;
    expectSuccess(await second);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
  });
});
