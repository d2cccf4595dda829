/**
 * What the fault suite shares: resetting the reference platform between cases, reading what plat left on disk and
 * checking it is one consistent session (or cleanly none), the "failed cleanly" assertion, a secret sweep, and
 * small process helpers (wait for a line, kill at a moment the server signals).
 */
import type { ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { expectCleanError, makeHome, type Home, type PlatResult, type RunOptions } from '../helpers/cli.js';
import type { Knobs, Platform } from '../platform/index.mjs';

export const AUTHORIZE_URL = /(https?:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/;

/** Captures the platform's knobs as they are now; the returned function restores them, clears overrides and stats. */
export function resetter(platform: Platform): () => void {
  const defaults: Knobs = { ...platform.knobs, unknownClients: [...platform.knobs.unknownClients], extraResources: [...platform.knobs.extraResources] };
  return () => {
    platform.clearOverrides();
    Object.assign(platform.knobs, defaults, { unknownClients: [...defaults.unknownClients], extraResources: [...defaults.extraResources] });
    platform.stats.reset();
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `check` is truthy (or fails the test after `timeoutMs`). */
export async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
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

/** Every file under `dir`, relative, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** Every file under `dir` with its bytes as text (binary files too: a secret is ASCII either way). */
export async function filesWithText(dir: string): Promise<Array<{ file: string; text: string }>> {
  const files = await listFiles(dir);
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(path.join(dir, file), 'latin1').catch(() => '') })));
}

export const profilePath = (home: Home, name = 'default') => path.join(home.configDir, 'profiles', `${name}.json`);
export const tokenPath = (home: Home, name = 'default') => path.join(home.configDir, 'tokens', `${name}.json`);
export const lockPath = (home: Home, name = 'default') => path.join(home.configDir, 'locks', `${name}.lock`);

async function readJsonOrUndefined(file: string): Promise<Record<string, any> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON (a torn write?):\n${text}`);
  }
}

export interface SessionState {
  profile: Record<string, any> | undefined;
  session: Record<string, any> | undefined;
}

/** The profile file and the file-store session (PLAT_TOKEN_STORE=file), parsed; a torn file fails the test. */
export async function readState(home: Home, name = 'default'): Promise<SessionState> {
  return { profile: await readJsonOrUndefined(profilePath(home, name)), session: await readJsonOrUndefined(tokenPath(home, name)) };
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
export function findSecret(text: string, secrets: string[]): string | undefined {
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

/** The redirect URI's port in an authorization URL. */
export const callbackPort = (authorizeUrl: string) => Number(new URL(new URL(authorizeUrl).searchParams.get('redirect_uri')!).port);

/**
 * A run option that approves consent (over HTTP, as a browser would) for the first authorization URL plat prints
 * and hands the callback to `deliver` (default: the browser lands on it).
 */
export function approveFirst(
  platform: Platform,
  deliver: (callback: string, child: ChildProcess, authorizeUrl: string) => Promise<void> | void = async (cb) => {
    await fetch(cb).then((r) => r.text());
  },
  options: { deny?: boolean; onUrl?: (url: string, child: ChildProcess) => void } = {},
): Pick<RunOptions, 'onStderr'> & { errors: string[]; url?: string } {
  const state: Pick<RunOptions, 'onStderr'> & { errors: string[]; url?: string } = {
    errors: [],
    onStderr(stderr, child) {
      const match = AUTHORIZE_URL.exec(stderr);
      if (!match || state.url) return;
      const url = match[1]!;
      state.url = url;
      options.onUrl?.(url, child);
      void (async () => {
        try {
          const callback = await platform.approve(url, { deny: options.deny });
          await deliver(callback, child, url);
        } catch (error) {
          state.errors.push((error as Error).message);
        }
      })();
    },
  };
  return state;
}

/** Signs in with the file store and fails the test if that does not work. */
export async function signIn(home: Home, platform: Platform, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<PlatResult> {
  const approval = approveFirst(platform);
  const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { env, onStderr: approval.onStderr });
  if (result.code !== 0) throw new Error(`login failed (${result.code}):\n${result.stderr}\n${approval.errors.join('\n')}`);
  return result;
}

/** Byte-for-byte contents of the session files (profile, tokens), for "nothing changed" checks. */
export async function sessionBytes(home: Home, name = 'default'): Promise<{ profile: string | null; tokens: string | null }> {
  const read = (file: string) => readFile(file, 'utf8').catch(() => null);
  return { profile: await read(profilePath(home, name)), tokens: await read(tokenPath(home, name)) };
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
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
