/**
 * The install path as a user takes it: `npm pack`, `npm i -g` of the tarball into a throwaway prefix, then the
 * installed `plat`, its man page and completions, and the library from the installed tree. The tarball holds only
 * what users need.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmEnv, packageJson, packPackage, type PackedPackage } from '../helpers/package.js';
import { scaled } from '../helpers/time.js';

const exec = promisify(execFile);
let pack: PackedPackage;
let prefix: string;
let installed: string;

beforeAll(async () => {
  pack = await packPackage();
  prefix = path.join(pack.dir, 'prefix');
  // The person's own npm cache (the suite runs under a throwaway HOME): dependencies come from the registry the
  // first time and from the cache afterwards.
  const cache = path.join(os.userInfo().homedir, '.npm');
  await exec('npm', ['i', '-g', '--prefix', prefix, pack.tarball, '--no-audit', '--no-fund', '--prefer-offline'], {
    env: npmEnv(existsSync(cache) ? { npm_config_cache: cache } : {}),
    timeout: 170_000,
  });
  installed = path.join(prefix, 'lib', 'node_modules', pack.name);
}, scaled(180_000));
afterAll(async () => {
  await pack?.cleanup();
});

describe('the npm package', () => {
  it('is named with a name of our own, and the command it installs is plat', async () => {
    const pkg = await packageJson();
    expect(pack.name).toBe('plat-cli');
    expect(pkg.bin).toEqual({ plat: 'bin/plat.js' });
  });

  it('holds only what users need: the shim, the bundles, the library and its types, the --json schemas, the help topics, man page, completions, README', () => {
    const allowed = [
      /^package\.json$/,
      /^README\.md$/,
      /^bin\/package\.json$/,
      /^bin\/plat\.js$/,
      /^completions\/(plat\.bash|_plat|plat\.fish)$/,
      /^dist\/(main|plain-(call|token|whoami)|mcp|refresh)\.cjs$/,
      /^dist\/plat\.1$/,
      /^dist\/library\/index\.(mjs|d\.ts)$/,
      /^dist\/library\/chunks\/[\w-]+\.mjs$/,
      /^dist\/schemas\/[\w-]+\.json$/,
      /^dist\/help\/[\w-]+\.md$/,
    ];
    const unexpected = pack.files.filter((file) => !allowed.some((re) => re.test(file)));
    expect(unexpected).toEqual([]);
    for (const needed of ['bin/plat.js', 'dist/main.cjs', 'dist/plain-call.cjs', 'dist/plain-token.cjs', 'dist/plain-whoami.cjs', 'dist/mcp.cjs', 'dist/refresh.cjs', 'dist/plat.1', 'dist/library/index.mjs', 'dist/library/index.d.ts', 'dist/schemas/login.json', 'dist/help/environment.md', 'completions/plat.bash', 'completions/_plat', 'completions/plat.fish']) {
      expect(pack.files).toContain(needed);
    }
  });

  it('installed globally from the tarball: plat --version runs from the prefix', async () => {
    const { stdout } = await exec(path.join(prefix, 'bin', 'plat'), ['--version']);
    expect(stdout).toBe(`${pack.version}\n`);
    // The whole program, not only the shim's fast path.
    const help = await exec(path.join(prefix, 'bin', 'plat'), ['exec', '--help']);
    expect(help.stdout).toMatch(/fresh token/);
    // A help topic's text is read from dist/help/, beside the installed bundle.
    const topic = await exec(path.join(prefix, 'bin', 'plat'), ['help', 'environment']);
    expect(topic.stdout).toMatch(/^Environment\n\n[\s\S]*PLAT_TOKEN_STORE\n/);
  });

  it('--jq loads jq (jq-web, a dependency outside the bundle) from the installed tree', async () => {
    // The expression is checked before any request, so no server is needed: a compile error proves jq ran.
    const failed = await exec(path.join(prefix, 'bin', 'plat'), ['call', 'GET', '/api/courses', '--jq', '.a | ]']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toMatch(/--jq: syntax error, unexpected INVALID_CHARACTER at column 6:/);
  });

  it("a script finds the --json schemas through the package's exports", async () => {
    const script = "console.log(require.resolve('plat-cli/schemas/login.json')); console.log(require('plat-cli/schemas/login.json').title)";
    const { stdout } = await exec(process.execPath, ['-e', script], { cwd: path.join(prefix, 'lib') });
    expect(stdout).toBe(`${path.join(await realpath(installed), 'dist', 'schemas', 'login.json')}\nplat login --json\n`);
  });

  it('man finds the page from that prefix', async () => {
    const { stdout } = await exec('man', ['-w', 'plat'], { env: { ...process.env, MANPATH: path.join(prefix, 'share', 'man') } });
    // man-db prints the page's real path: the link npm made in <prefix>/share/man leads to the installed page.
    expect(await realpath(stdout.trim())).toBe(await realpath(path.join(installed, 'dist', 'plat.1')));
    expect(await realpath(path.join(prefix, 'share', 'man', 'man1', 'plat.1'))).toBe(await realpath(stdout.trim()));
    const page = await readFile(stdout.trim(), 'utf8');
    expect(page).toContain('.TH PLAT 1');
    expect(page).toContain('npm i \\-g plat-cli');
  });

  it('the completions are in the installed files and match what the installed plat prints', async () => {
    const files: Array<[string, string]> = [
      ['bash', 'plat.bash'],
      ['zsh', '_plat'],
      ['fish', 'plat.fish'],
    ];
    for (const [shell, file] of files) {
      const script = await readFile(path.join(installed, 'completions', file), 'utf8');
      const { stdout } = await exec(path.join(prefix, 'bin', 'plat'), ['completion', shell]);
      expect(script, file).toBe(stdout);
      expect(script).toContain('exec');
    }
  });

  it('the library loads from the installed tree with its own dependencies', async () => {
    const entry = pathToFileURL(path.join(installed, 'dist', 'library', 'index.mjs')).href;
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).sort().join(' '))`]);
    expect(stdout.trim()).toBe('AuthError NetworkError PlatError ScopeError UsageError createClient');
  });
});
