/**
 * What the fault suite shares beyond the suite's own toolkit (usePlatform, the consent driver and the state readers
 * in test/helpers/): checking that what plat left on disk is one consistent session (or cleanly none), the "failed
 * cleanly" assertion, a secret sweep, an unprivileged home, and small process helpers.
 */
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { expectCleanError, makeHome, type Home, type PlatResult } from '../helpers/cli.js';
import { filesWithText, listFiles, readState, type SessionState } from '../helpers/state.js';
import { scaled } from '../helpers/time.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` is truthy (or fails the test after `timeoutMs`, scaled to the machine: helpers/time.ts). */
export async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = scaled(10_000)): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * A failure the contract's way: the exit code, a sentence on stderr after "error:", no stack trace, and nothing on
 * stdout (a failed command prints no result).
 */
export function expectFailure(result: PlatResult, code: number, message: RegExp, options: { stdout?: boolean } = {}): void {
  expect(result.code, `exit code (stderr: ${result.stderr})`).toBe(code);
  expect(result.signal).toBeNull();
  expect(result.stderr).toMatch(message);
  const errorLine = result.stderr.split('\n').find((line) => line.startsWith('error: '));
  if (code !== 130) {
    expect(errorLine, `an "error:" line in:\n${result.stderr}`).toBeDefined();
    expect(errorLine!.length).toBeGreaterThan(20);
  }
  expectCleanError(result);
  if (!options.stdout) expect(result.stdout).toBe('');
}

export function expectSuccess(result: PlatResult): void {
  expect(result.code, `exit code (stderr: ${result.stderr})`).toBe(0);
  expectCleanError(result);
}

export type Consistency = 'logged-in' | 'logged-out' | 'absent';

/**
 * The stored state is one session or cleanly none: files parse, no temporary files are left, and the profile's
 * copies (loggedIn, expiresAt, scopes) agree with the session in the token store. `session` defaults to the file
 * store's; pass the keychain's for a keychain profile.
 */
export async function expectConsistent(
  home: Home,
  name = 'default',
  state?: SessionState,
  options: { allowTemp?: boolean } = {},
): Promise<Consistency> {
  const files = await listFiles(home.configDir);
  if (!options.allowTemp) expect(files.filter((f) => f.endsWith('.tmp')), 'temporary files left behind').toEqual([]);
  const { profile, session } = state ?? (await readState(home, name));
  if (session) {
    expect(typeof session.accessToken).toBe('string');
    expect(session.tokenType).toBe('Bearer');
  }
  if (!profile) {
    expect(session, 'a session without a profile').toBeUndefined();
    return 'absent';
  }
  if (profile.loggedIn) {
    expect(session, 'profile says logged in, but there is no session').toBeDefined();
    expect(profile.expiresAt, 'profile and session disagree on expiresAt').toBe(session!.expiresAt);
    expect(profile.scopes, 'profile and session disagree on scopes').toEqual(session!.scopes);
    expect(profile.client?.clientId).toBeTruthy();
    return 'logged-in';
  }
  expect(session, 'profile says logged out, but a session is stored').toBeUndefined();
  return 'logged-out';
}

export type RawState = Consistency | 'uncommitted' | 'stale-copies' | 'flag-without-session';

/**
 * What a killed plat left, before any plat command looks at it: whole files (a torn one fails the test) in one of
 * the consistent states, or one of the states of being killed between the two writes (the session, then the
 * profile): a session its profile does not point to yet, a profile whose copies of expiry and scopes lag the
 * session, or (killed while logging out) a profile that still says logged in over a deleted session.
 */
export async function classifyRaw(home: Home, name = 'default'): Promise<RawState> {
  const { profile, session } = await readState(home, name);
  if (!profile) return session ? 'uncommitted' : 'absent';
  if (!profile.loggedIn) return session ? 'uncommitted' : 'logged-out';
  if (!session) return 'flag-without-session';
  const agree = profile.expiresAt === session.expiresAt && JSON.stringify(profile.scopes) === JSON.stringify(session.scopes);
  return agree ? 'logged-in' : 'stale-copies';
}

/**
 * The first secret (or a 16-character piece of one) found in `text`, if any. Pieces catch a token that was cut
 * short (an error message bounded to 200 characters) as well as a whole one.
 */
function findSecret(text: string, secrets: string[]): string | undefined {
  for (const secret of secrets) {
    if (secret.length < 8) continue;
    if (text.includes(secret)) return secret;
    for (let i = 0; i + 16 <= secret.length; i += 8) {
      if (text.includes(secret.slice(i, i + 16))) return `${secret} (a piece of it: ${secret.slice(i, i + 16)})`;
    }
  }
  return undefined;
}

export function expectNoSecret(text: string, secrets: string[], where: string): void {
  const hit = findSecret(text, secrets);
  expect(hit, `a secret in ${where}`).toBeUndefined();
}

export async function expectNoSecretInFiles(dir: string, secrets: string[], options: { except?: (file: string) => boolean } = {}): Promise<number> {
  const files = await filesWithText(dir);
  let swept = 0;
  for (const { file, text } of files) {
    if (options.except?.(file)) continue;
    swept++;
    expectNoSecret(text, secrets, path.join(dir, file));
  }
  return swept;
}

/** Whether a TCP port on 127.0.0.1 accepts connections now. */
export async function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** ANSI escape sequences: none may appear when no terminal is attached. */
export const ANSI = /\u001b\[/;

/**
 * Permissions do not stop root, and these tests run as root in containers. A home whose plat runs as an
 * unprivileged user (nobody, when the tests run as root; the tests' own user otherwise) meets them honestly:
 * `readOnly(dir)` then really makes `dir` unwritable for plat.
 */
export interface UnprivilegedHome extends Home {
  readOnly(dir: string): Promise<void>;
  writable(dir: string): Promise<void>;
}

const NOBODY = 65534;

export async function makeUnprivilegedHome(extraEnv: Record<string, string | undefined> = {}): Promise<UnprivilegedHome> {
  const root = process.getuid?.() === 0;
  const base = await makeHome(extraEnv);
  if (!root) {
    return {
      ...base,
      readOnly: (dir) => chmod(dir, 0o500),
      writable: (dir) => chmod(dir, 0o700),
    };
  }
  // The test's own temp dir is private to root: nobody needs a home it can reach, under the system's /tmp.
  const dir = await mkdtemp(path.join(os.platform() === 'linux' ? '/tmp' : os.tmpdir(), 'plat faults '));
  const configDir = path.join(dir, 'config dir');
  const env = { ...base.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, '.config'), XDG_CACHE_HOME: path.join(dir, '.cache'), PLAT_CONFIG_DIR: configDir };
  await base.cleanup();
  await chown(dir, NOBODY, NOBODY);
  const home: UnprivilegedHome = {
    dir,
    configDir,
    env,
    run: (args, options = {}) => base.run(args, { ...options, env: { ...env, ...options.env }, uid: NOBODY, gid: NOBODY }),
    login: (platform, args = [], options = {}) => base.login(platform, args, { ...options, env: { ...env, ...options.env }, uid: NOBODY, gid: NOBODY }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
    readOnly: (target) => chmod(target, 0o500),
    writable: (target) => chmod(target, 0o700),
  };
  return home;
}
