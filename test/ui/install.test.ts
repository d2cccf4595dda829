/**
 * Install and the first minutes (issue 17): a global install (and npm link) puts the man page where `man` finds
 * it; the sandbox banner prints a login command that works from the checkout as printed; the README's keychain
 * recipe, run line by line as written, gives plat a working keychain.
 */
import { spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, repoRoot, type Home } from '../helpers/cli.js';
import { keyring } from '../helpers/components.js';
import { APPROVING_BROWSER } from '../helpers/login.js';
import { usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

let home: Home;
beforeEach(async () => {
  home = await makeHome();
});
afterEach(async () => {
  await home.cleanup();
});

function sh(script: string, options: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string; until?: RegExp } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; kill: () => void }>((resolve, reject) => {
    const env = definedEnv({ ...home.env, ...options.env }) as NodeJS.ProcessEnv;
    const child = spawn('bash', options.stdin === undefined ? ['-c', script] : ['-s'], { cwd: options.cwd ?? repoRoot, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    const kill = () => child.kill('SIGTERM');
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (options.until?.test(stdout)) resolve({ code: null, stdout, stderr, kill });
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`did not finish in time\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, scaled(60_000));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, kill });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

describe('a global install', () => {
  it('installs the man page (the "man" field in its array form) and the command', async () => {
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
    expect(pkg.man).toEqual(['./dist/plat.1']);
    const prefix = await mkdtemp(path.join(os.tmpdir(), 'plat prefix '));
    try {
      // What `npm i -g` from a checkout (and npm link) does: link the package, its bin and its man pages.
      const result = await sh(`npm install -g --prefix "$PREFIX" --offline --ignore-scripts --no-audit --no-fund "$PWD"`, { env: { PREFIX: prefix } });
      expect(result.code, result.stderr).toBe(0);
      await access(path.join(prefix, 'share', 'man', 'man1', 'plat.1'));
      const version = await sh(`"$PREFIX/bin/plat" --version`, { env: { PREFIX: prefix } });
      expect(version.stdout.trim()).toBe(pkg.version);
      expect(await realpath(path.join(prefix, 'share', 'man', 'man1', 'plat.1'))).toBe(await realpath(path.join(repoRoot, 'dist', 'plat.1')));
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });
});

describe('the sandbox banner', () => {
  let sandbox: Awaited<ReturnType<typeof sh>> | undefined;
  afterAll(() => sandbox?.kill());

  it('prints a login command that works from the checkout as printed (plat is not on PATH yet)', async () => {
    sandbox = await sh('exec node test/platform/sandbox.mjs', { until: /npm link/ });
    const command = /^Log in with: (.+)$/m.exec(sandbox.stdout)?.[1];
    expect(command).toMatch(/^node bin\/plat\.js login --base-url http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.stdout).toMatch(/or run npm link once, then: plat login --base-url/);
    // a PATH without plat on it, as after the two set-up commands
    const result = await sh(command!, { env: { PLAT_BROWSER: APPROVING_BROWSER, PATH: path.dirname(process.execPath) + ':/usr/bin:/bin' } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ as Ada Lovelace/);
  });
});

describe.skipIf(keyring.skip)(keyring.title("plat help troubleshooting's keychain recipe"), () => {
  beforeEach(() => keyring.require());
  const platform = usePlatform();

  it('run line by line as written, gives plat a working keychain', async () => {
    const topic = await readFile(path.join(repoRoot, 'src', 'help', 'topics', 'troubleshooting.md'), 'utf8');
    const block = /^[ \t]*```[a-z]*\n([\s\S]*?)^[ \t]*```/gm;
    const recipe = [...topic.matchAll(block)].map((m) => m[1]!).find((b) => b.includes('gnome-keyring-daemon'));
    expect(recipe).toContain('--components=secrets');
    // Typed into a terminal: the first line starts a shell that reads the next lines; `plat` is the built one, and
    // its login gets the test platform and no stdin (it would read the following lines as a pasted address).
    const lines = recipe!
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .map((line) => line.replace(/^plat login\b([^#]*)(#.*)?$/, `plat login --base-url ${platform.baseUrl}$1 < /dev/null $2`));
    const script = [
      `plat() { node '${path.join(repoRoot, 'bin', 'plat.js')}' "$@"; }; export -f plat`,
      ...lines,
      'plat status --json',
      'exit',
    ].join('\n');
    // A person's own session: its own runtime dir (the test run's keyring daemon has one already, and
    // gnome-keyring-daemon --unlock would unlock that one instead of starting its own on the new bus).
    const runtimeDir = path.join(home.dir, 'run');
    await mkdir(runtimeDir, { mode: 0o700 });
    const result = await sh('', {
      stdin: `${script}\n`,
      env: { KEYRING_PASSPHRASE: 'a passphrase', PLAT_TOKEN_STORE: 'keychain', PLAT_BROWSER: APPROVING_BROWSER, DBUS_SESSION_BUS_ADDRESS: undefined, GNOME_KEYRING_CONTROL: undefined, PLAT_TEST_KEYRING: undefined, XDG_RUNTIME_DIR: runtimeDir, XDG_DATA_HOME: undefined },
    });
    expect(result.stderr, result.stdout).not.toMatch(/Object does not exist|error:/);
    if (!result.stdout.includes("{")) throw new Error(`stdout: ${result.stdout}\nstderr: ${result.stderr}`);
    const status = JSON.parse(result.stdout.slice(result.stdout.indexOf('{')));
    expect(status.profiles[0]).toMatchObject({ loggedIn: true, tokenStore: 'keychain' });
  });
});
