/**
 * The machine misbehaving: a config dir plat cannot create or write, config files cut short or edited into
 * garbage, a config dir with spaces and shell characters in its path, stdin closed, no terminal. plat keeps
 * working where it can, and otherwise fails with a sentence that names the file and a fix that works.
 *
 * "Unwritable" as root: permissions do not stop root, so those cases run plat as an unprivileged user (nobody)
 * on a directory it may read but not write (see makeUnprivilegedHome); the path-under-a-file case needs no user.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run as call } from '../../src/commands/call/call.js';
import { run as logout } from '../../src/commands/auth/logout.js';
import { run as refresh } from '../../src/commands/auth/refresh.js';
import { run as scopes } from '../../src/commands/scopes/scopes.js';
import { run as runStatus } from '../../src/commands/auth/status.js';
import { run as token } from '../../src/commands/auth/token.js';
import { run as whoami } from '../../src/commands/auth/whoami.js';
import type { Context } from '../../src/context.js';
import { platBin, type Home, type PlatResult } from '../helpers/cli.js';
import { approving, AUTHORIZE_URL, signIn } from '../helpers/consent.js';
import { expectPlatError, useTestContexts } from '../helpers/context.js';
import { listFiles, profilePath, sessionBytes, tokenPath } from '../helpers/state.js';
import { ANSI, expectConsistent, expectFailure, expectSuccess, makeUnprivilegedHome, type UnprivilegedHome } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { freePort } from '../interop/servers.js';

const platform = usePlatform();
const home = useHome();

function login(h: Home, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<PlatResult> {
  const approval = approving(platform, { firstOnly: true });
  return h.run(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { env, onStderr: approval.onStderr });
}

describe('a config dir plat cannot create (its path runs through a file)', () => {
  const commands: Array<[string, string[]]> = [
    ['login', ['login', '--no-browser']],
    ['whoami', ['whoami']],
    ['token', ['token']],
    ['call', ['call', 'GET', '/api/courses']],
    ['refresh', ['refresh']],
    ['logout', ['logout']],
    ['scopes', ['scopes']],
  ];
  it.each(commands)('%s: exit 1, naming the path and PLAT_CONFIG_DIR, before any request', async (_name, args) => {
    await writeFile(path.join(home.dir, 'a file'), 'not a directory');
    const configDir = path.join(home.dir, 'a file', 'plat');
    const result = await home.run([...args, '--base-url', platform.baseUrl], { env: { PLAT_CONFIG_DIR: configDir } });
    expectFailure(result, 1, /a parent of it is a file, not a directory\. .*PLAT_CONFIG_DIR/);
    expect(result.stderr).toContain(path.join(home.dir, 'a file'));
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(platform.stats.count('token:authorization_code') + platform.stats.count('register')).toBe(0);
  });

  it('status: exit 1 the same way', async () => {
    await writeFile(path.join(home.dir, 'a file'), 'x');
    const result = await home.run(['status'], { env: { PLAT_CONFIG_DIR: path.join(home.dir, 'a file', 'plat') } });
    expectFailure(result, 1, /a parent of it is a file/);
  });
});

describe('a config dir plat may read but not write (plat runs unprivileged)', () => {
  let h: UnprivilegedHome;
  beforeEach(async () => {
    h = await makeUnprivilegedHome();
  });
  afterEach(async () => {
    await h.writable(h.configDir).catch(() => undefined);
    await h.cleanup();
  });

  async function readOnlyTree(dir: string) {
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) await h.readOnly(path.join(entry.parentPath, entry.name));
    }
    await h.readOnly(dir);
  }
  async function writableTree(dir: string) {
    await h.writable(dir);
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) await h.writable(path.join(entry.parentPath, entry.name));
    }
  }

  it('a first login fails before anything opens (exit 1: permission denied), not after consent', async () => {
    await mkdir(h.configDir);
    if (process.getuid?.() === 0) await import('node:fs/promises').then((fs) => fs.chown(h.configDir, 65534, 65534));
    await h.readOnly(h.configDir);
    const result = await login(h);
    expectFailure(result, 1, /Cannot (write in|create the directory) .*permission denied\. Fix its permissions, or set PLAT_CONFIG_DIR/);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(platform.stats.count('register')).toBe(0);
  });

  describe('with a session stored before the directory became read-only', () => {
    beforeEach(async () => {
      await signIn(h, platform, ['--scope', 'courses:read']);
      platform.stats.reset();
      await readOnlyTree(h.configDir);
    });

    it('plat call with a valid token keeps working: reading needs no writing', async () => {
      const result = await h.run(['call', 'GET', '/api/courses']);
      expectSuccess(result);
      expect(JSON.parse(result.stdout).anonymous).toBe(false);
      expectSuccess(await h.run(['status']));
      expectSuccess(await h.run(['whoami']));
    });

    it('plat refresh fails before asking the server (the spent refresh token would be lost), and works once writable', async () => {
      const before = await sessionBytes(h);
      expectFailure(await h.run(['refresh']), 1, /Cannot create (the lock|the directory) .*permission denied/);
      expect(platform.stats.count('token:refresh_token')).toBe(0);
      expect(await sessionBytes(h)).toEqual(before);
      await writableTree(h.configDir);
      expectSuccess(await h.run(['refresh']));
      expect(await expectConsistent(h)).toBe('logged-in');
    });

    it('plat logout fails before revoking (it could not forget the tokens), and works once writable', async () => {
      expectFailure(await h.run(['logout']), 1, /permission denied/);
      expect(platform.stats.count('POST /api/oauth/revoke')).toBe(0);
      await writableTree(h.configDir);
      expectSuccess(await h.run(['logout']));
      expect(await expectConsistent(h)).toBe('logged-out');
    });

    it('plat login (again) fails before anything opens, and the session stays usable', async () => {
      const result = await login(h);
      expectFailure(result, 1, /permission denied/);
      expect(result.stderr).not.toMatch(AUTHORIZE_URL);
      expectSuccess(await h.run(['call', 'GET', '/api/courses']));
    });
  });
});

describe('config files cut short or edited into garbage', () => {
  // Each kind of damage against each command runs in-process (testContext, each command's own run function, a
  // fresh context per command as a fresh process would have): which sentence a damaged file gets is the store's
  // and the session's decision. One kind of each goes through the binary for the contract: the "error:" line on
  // stderr, the exit code, nothing on stdout, no crash.
  const open = useTestContexts(home);

  /** The commands that read the profile: their words, and how plat runs them once those are parsed. */
  const PROFILE_COMMANDS: Array<[string[], (ctx: Context) => Promise<void>]> = [
    [['token'], (ctx) => token(ctx)],
    [['whoami'], (ctx) => whoami(ctx)],
    [['call', 'GET', '/api/courses'], (ctx) => call(ctx, 'GET', '/api/courses', {})],
    [['refresh'], (ctx) => refresh(ctx)],
    [['logout'], (ctx) => logout(ctx, { revoke: true })],
    [['scopes'], (ctx) => scopes(ctx)],
  ];
  /** The commands that read the session. */
  const SESSION_COMMANDS = PROFILE_COMMANDS.filter(([[name]]) => ['token', 'whoami', 'call', 'refresh'].includes(name!));

  const DAMAGED_PROFILE = /profiles.default\.json (is empty|is not valid JSON|does not hold a profile) .*Delete it, or run `plat login` for this profile again/;
  const DAMAGED_SESSION = /tokens.default\.json (is empty|is not valid JSON|does not hold a plat session) .*Delete it or run `plat login` again/;

  const PROFILE_DAMAGE: Array<[string, string]> = [
    ['empty', ''],
    ['cut short', '{"name":"default","baseUrl":"http://127.0.0.1:1'],
    ['not JSON', 'garbage\n'],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['members of the wrong type', '{"loggedIn":"yes","scopes":"openid","baseUrl":42}'],
    ['a base URL that is not a URL', '{"loggedIn":true,"baseUrl":"not a url","tokenStore":"file"}'],
    ['binary noise', '\u0000\u0001\u00ff\u00fe{'],
  ];

  it('through plat, a profile that is not JSON: every command that needs it exits 1 with the sentence on stderr; status --json exits 4 and lists it', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    await writeFile(profilePath(home), 'garbage\n');
    for (const [args] of PROFILE_COMMANDS) expectFailure(await home.run(args), 1, DAMAGED_PROFILE);
    const status = await home.run(['status', '--json']);
    expectFailure(status, 4, /Profile default cannot be used now: .*profiles.default\.json/, { stdout: true });
    expect(JSON.parse(status.stdout).profiles[0]).toMatchObject({ profile: 'default', loggedIn: false, problem: expect.stringMatching(/profiles.default\.json/) });
  });

  describe.each(PROFILE_DAMAGE)('the profile file is %s', (_what, content) => {
    beforeEach(async () => {
      await signIn(home, platform, ['--scope', 'courses:read']);
      await writeFile(profilePath(home), content);
    });

    it('commands that need it exit 1 naming the file and the fix; status lists it; nothing crashes', async () => {
      for (const [[name], run] of PROFILE_COMMANDS) {
        const t = open();
        await expectPlatError(t, () => run(t.ctx), 1, DAMAGED_PROFILE, { what: name });
      }
      // listed with its problem, and exit 4: that profile is not logged in
      const status = open({ globals: { json: true } });
      await expectPlatError(status, () => runStatus(status.ctx, {}), 4, /Profile default cannot be used now: .*profiles.default\.json/, { stdout: true });
      expect(JSON.parse(status.stdout()).profiles[0]).toMatchObject({ profile: 'default', loggedIn: false, problem: expect.stringMatching(/profiles.default\.json/) });
    });

    it('plat login, as the message says, replaces it and signs in', async () => {
      const result = await login(home, ['--scope', 'courses:read']);
      expectSuccess(result);
      expect(result.stderr).toMatch(/warning: .*profiles.default\.json is damaged; this sign-in replaces it/);
      expect(await expectConsistent(home)).toBe('logged-in');
      expectSuccess(await home.run(['call', 'GET', '/api/courses']));
    });
  });

  const SESSION_DAMAGE: Array<[string, string]> = [
    ['empty', ''],
    ['cut short', '{"accessToken":"abc'],
    ['not JSON', 'x'],
    ['of the wrong shape', '{"accessToken":5}'],
  ];

  it('through plat, a token file that is not JSON: every command that uses it exits 1 with the sentence on stderr; status --json says logged out with the problem', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    await writeFile(tokenPath(home), 'x');
    for (const [args] of SESSION_COMMANDS) expectFailure(await home.run(args), 1, DAMAGED_SESSION);
    const status = JSON.parse((await home.run(['status', '--json'])).stdout);
    expect(status.profiles[0]).toMatchObject({ loggedIn: false, problem: expect.stringMatching(/tokens.default\.json/) });
  });

  describe.each(SESSION_DAMAGE)('the token file is %s', (_what, content) => {
    beforeEach(async () => {
      await signIn(home, platform, ['--scope', 'courses:read']);
      await writeFile(tokenPath(home), content);
    });

    it('commands that use it exit 1 naming the file and the fix; status says logged out with the problem', async () => {
      for (const [[name], run] of SESSION_COMMANDS) {
        const t = open();
        await expectPlatError(t, () => run(t.ctx), 1, DAMAGED_SESSION, { what: name });
      }
      const status = open({ globals: { json: true } });
      await expectPlatError(status, () => runStatus(status.ctx, {}), 4, /Profile default cannot be used now: .*tokens.default\.json/, { stdout: true });
      expect(JSON.parse(status.stdout()).profiles[0]).toMatchObject({ loggedIn: false, problem: expect.stringMatching(/tokens.default\.json/) });
    });

    it('plat logout forgets it (it cannot be revoked, and says so)', async () => {
      const result = await home.run(['logout']);
      expectSuccess(result);
      expect(result.stderr).toMatch(/warning: Could not revoke .*damaged/);
      expect(await expectConsistent(home)).toBe('logged-out');
    });

    it('plat login replaces it', async () => {
      expectSuccess(await login(home, ['--scope', 'courses:read']));
      expect(await expectConsistent(home)).toBe('logged-in');
    });
  });

  it('a damaged discovery or API-description cache is ignored and fetched again', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    expectSuccess(await home.run(['op']));
    const cache = path.join(home.configDir, 'cache');
    const files = await readdir(cache);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) await writeFile(path.join(cache, file), '{"cut sho');
    for (const args of [['refresh'], ['discover'], ['op'], ['scopes'], ['call', 'GET', '/api/courses'], ['logout']]) {
      const result = await home.run(args);
      expectSuccess(result);
      expect(result.stderr).not.toMatch(/warning|error/);
    }
  });
});

describe('a config dir whose path has spaces, quotes and shell characters', () => {
  it('the whole journey works, and every file lands inside it', async () => {
    const configDir = path.join(home.dir, "dir with spaces 'quotes' \"double\" $(echo no) ; & | * ? [x] é ✓");
    const env = { PLAT_CONFIG_DIR: configDir };
    expectSuccess(await login(home, ['--scope', 'courses:read'], env));
    expectSuccess(await home.run(['call', 'GET', '/api/courses'], { env }));
    expectSuccess(await home.run(['refresh'], { env }));
    expectSuccess(await home.run(['status'], { env }));
    expectSuccess(await home.run(['logout'], { env }));
    expect((await listFiles(configDir)).filter((f) => !f.startsWith('cache'))).toEqual(['profiles/default.json']);
    expect(await listFiles(home.configDir)).toEqual([]);
  });
});

describe('stdin closed, and no terminal', () => {
  /** Runs plat with file descriptor 0 closed altogether (not /dev/null, not a pipe). */
  function runWithStdinClosed(args: string[], onStderr?: (stderr: string) => void): Promise<PlatResult> {
    return new Promise((resolve) => {
      const child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" <&-', process.execPath, platBin, ...args], {
        env: home.env as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        onStderr?.(stderr);
      });
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
  }

  it('plat login with stdin closed completes through the listener (a forwarded --port: the one way left without a terminal)', async () => {
    let approved = false;
    const result = await runWithStdinClosed(['login', '--no-browser', '--port', String(await freePort()), '--base-url', platform.baseUrl], (stderr) => {
      const match = AUTHORIZE_URL.exec(stderr);
      if (match && !approved) {
        approved = true;
        void platform.approve(match[1]!).then((cb) => fetch(cb).then((r) => r.text()));
      }
    });
    expectSuccess(result);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('--client-secret-stdin with stdin closed is a usage error (exit 2) before anything opens', async () => {
    const result = await runWithStdinClosed(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-id', platform.preRegistered.confidentialClientId, '--client-secret-stdin']);
    expectFailure(result, 2, /expects the client secret on the first line of stdin, and stdin was empty/);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
  });

  it('plat call --input - with stdin closed sends an empty body', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const result = await runWithStdinClosed(['call', 'POST', '/api/echo', '--input', '-']);
    expectSuccess(result);
    expect(JSON.parse(result.stdout).body).toBe('');
  });

  it('commands that never read stdin do not care: status, token, logout', async () => {
    await signIn(home, platform);
    for (const args of [['status'], ['token'], ['logout']]) expectSuccess(await runWithStdinClosed(args));
  });

  it('off a terminal: no colour, no spinner, no prompt waiting for input, in results and in errors', async () => {
    const result = await login(home, ['--scope', 'courses:read']);
    expectSuccess(result);
    const outputs = [result, await home.run(['status']), await home.run(['whoami']), await home.run(['call', 'GET', '/api/nope']), await home.run(['login', '--scope', 'courses:reed'])];
    for (const output of outputs) {
      expect(output.stdout + output.stderr).not.toMatch(ANSI);
      expect(output.stderr).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    }
    // stdin is a pipe that stays open and silent: login still finishes through the listener, without a prompt.
    const approval = approving(platform, { firstOnly: true });
    const again = await home.run(['login', '--no-browser'], { keepStdinOpen: true, onStderr: approval.onStderr });
    expectSuccess(again);
  });
});

describe('a permissive umask', () => {
  it('umask 000: the token file and the profile are still 0600, in 0700 directories', async () => {
    const child = spawn('/bin/sh', ['-c', `umask 000; exec "$0" "$@"`, process.execPath, platBin, 'login', '--no-browser', '--base-url', platform.baseUrl], {
      env: home.env as NodeJS.ProcessEnv,
      // stdin a pipe (where the address could be pasted): a login with no way to finish is refused at once.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let approved = false;
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const match = AUTHORIZE_URL.exec(stderr);
      if (match && !approved) {
        approved = true;
        void platform.approve(match[1]!).then((cb) => fetch(cb).then((r) => r.text()));
      }
    });
    child.stdout!.resume();
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    const { stat } = await import('node:fs/promises');
    expect((await stat(home.configDir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(home.configDir, 'tokens'))).mode & 0o777).toBe(0o700);
    expect((await stat(tokenPath(home))).mode & 0o777).toBe(0o600);
    expect((await stat(profilePath(home))).mode & 0o777).toBe(0o600);
    expect(await expectConsistent(home)).toBe('logged-in');
  });
});
