/**
 * The start-up tricks must keep working, or plat silently gets slower: the V8 code cache of bin/plat.js, the
 * bundle's latin1 read (it must be ASCII), chalk initialised on first use, commander with node:child_process deferred (src/build/build.mjs), chalk
 * without its terminal detection (node:tty), standard streams built only when used (main.ts, terminal/io.ts), and no
 * node:fs/promises on the token path (store/atomic.ts), and plat mcp with the MCP SDK in a bundle of their own that
 * only plat mcp loads. Each would break without an error, so each is checked from outside, on the built CLI.
 */
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runPlatProbed } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

describe('the V8 code cache of bin/plat.js', () => {
  it('is written by the first run and then used as is (V8 accepts it: a rejected cache would be rewritten)', async () => {
    const cacheDir = path.join(home.dir, 'code cache');
    const env = { XDG_CACHE_HOME: cacheDir };
    // No profiles yet, so status exits 4 (like gh auth status); what matters here is the cache it leaves.
    expect((await home.run(['status'], { env })).code).toBe(4);
    const files = await readdir(path.join(cacheDir, 'plat'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^main-v8-${process.version.replace(/\./g, '\\.')}-\\d+-\\d+-status\\.bin$`));
    const file = path.join(cacheDir, 'plat', files[0]!);
    const first = await stat(file);
    expect(first.size).toBeGreaterThan(10_000);

    for (let i = 0; i < 2; i++) expect((await home.run(['status'], { env })).code).toBe(4);
    const later = await stat(file);
    expect([later.ino, later.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    expect(await readdir(path.join(cacheDir, 'plat'))).toEqual(files);
    // Another command keeps a cache of its own: the functions it compiles are not status's.
    await home.run(['scopes'], { env });
    expect((await readdir(path.join(cacheDir, 'plat'))).sort()).toEqual([...files, files[0]!.replace('-status.bin', '-scopes.bin')].sort());
  });

  it("removes other builds' caches a day old when it writes one, and keeps the rest", async () => {
    const cacheDir = path.join(home.dir, 'pruned cache');
    const dir = path.join(cacheDir, 'plat');
    await mkdir(dir, { recursive: true });
    const build = async (bundle: string) => {
      const { size, mtimeMs } = await stat(path.join(repoRoot, 'dist', `${bundle}.cjs`));
      return `${bundle}-v8-${process.version}-${size}-${Math.floor(mtimeMs)}-`;
    };
    const [thisBuild, thisPlainBuild] = [await build('main'), await build('plain')];
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    const files = {
      oldRelease: 'main-v8-v20.11.0-500000-1700000000000-status.bin',
      oldReleaseOtherCommand: 'main-v8-v20.11.0-500000-1700000000000-call.bin',
      beforeBundleNames: 'v8-v20.11.0-500000-1700000000000-call.bin',
      sideBySide: 'main-v8-v20.11.0-600000-1800000000000-status.bin', // another plat, in use today
      thisBuildOtherCommand: `${thisBuild}token.bin`,
      thisBuildPlainBundle: `${thisPlainBuild}token.bin`, // the other bundle of the same build: not this one's to judge
      notOurs: 'notes.txt',
    };
    for (const [key, name] of Object.entries(files)) {
      await writeFile(path.join(dir, name), 'x');
      if (key !== 'sideBySide') await utimes(path.join(dir, name), twoDaysAgo, twoDaysAgo);
    }
    expect((await home.run(['status'], { env: { XDG_CACHE_HOME: cacheDir } })).code).toBe(4);
    expect((await readdir(dir)).sort()).toEqual(
      [files.sideBySide, files.thisBuildOtherCommand, files.thisBuildPlainBundle, `${thisBuild}status.bin`, files.notOurs].sort(),
    );
  });
});

describe('the bundle of the plain forms (dist/plain.cjs)', () => {
  it('is main.ts built without commander and the other commands: half the text of dist/main.cjs', async () => {
    const read = (bundle: string) => readFile(path.join(repoRoot, 'dist', `${bundle}.cjs`), 'latin1');
    const [plain, whole] = [await read('plain'), await read('main')];
    // esbuild names each module it bundles in a comment: the plain bundle has the three commands, not the others.
    for (const module of ['src/main.ts', 'src/dispatch.ts', 'src/commands/call/call.ts', 'src/commands/auth/token.ts', 'src/commands/auth/whoami.ts']) {
      expect(plain).toContain(`// ${module}\n`);
    }
    for (const module of ['node_modules/commander/', 'src/cli.ts', 'src/commands/auth/login.ts', 'src/commands/op/op.ts', 'src/commands/batch/batch.ts', 'src/batch/engine.ts', 'src/completion/']) {
      expect(plain).not.toContain(`// ${module}`);
      expect(whole).toContain(`// ${module}`);
    }
    expect(plain.length).toBeLessThan(whole.length * 0.6);
  });

  it('runs the plain forms, and bin/plat.js hands every other command line to dist/main.cjs', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const cacheDir = path.join(home.dir, 'bundles');
    const env = { XDG_CACHE_HOME: cacheDir };
    // Each bundle keeps its code cache under its own name: the caches say which bundle ran.
    const ranBy = async (args: string[]) => {
      await rm(cacheDir, { recursive: true, force: true });
      const result = await home.run(args, { env });
      const [cache, ...more] = await readdir(path.join(cacheDir, 'plat'));
      expect(more).toEqual([]);
      return { ...result, bundle: cache!.split('-')[0] };
    };
    for (const args of [['call', 'GET', '/api/courses'], ['token'], ['whoami']]) {
      expect(await ranBy(args), `plat ${args.join(' ')}`).toMatchObject({ code: 0, bundle: 'plain' });
    }
    expect(await ranBy(['call', 'GET', '/api/courses', '-i'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^HTTP\/1\.1 200/), bundle: 'main' });
    // Words the plain bundle looks at and does not run: commander's usage errors, from the whole program.
    expect(await ranBy(['token', 'extra'])).toMatchObject({ code: 2, stderr: expect.stringContaining("too many arguments for 'token'"), bundle: 'main' });
    expect(await ranBy(['call', 'GET'])).toMatchObject({ code: 2, stderr: expect.stringContaining('plat call needs a path after the method'), bundle: 'main' });
  });
});

describe('the bundle bin/plat.js reads as latin1', () => {
  it('is ASCII, so latin1 and utf8 read the same text (and the code cache V8 keys by it stays valid)', async () => {
    for (const bundle of ['main.cjs', 'plain.cjs']) {
      const bytes = await readFile(path.join(repoRoot, 'dist', bundle));
      expect(bytes.findIndex((b) => b > 0x7f), bundle).toBe(-1);
    }
  });

  it('builds chalk\'s style tables in a lazy initialiser (terminal/io.ts requires chalk on first use), not at its top level', async () => {
    const lines = (await readFile(path.join(repoRoot, 'dist', 'main.cjs'), 'latin1')).split('\n');
    const builds = lines.filter((line) => /\bansiStyles = assembleStyles\(\)/.test(line));
    expect(builds).toHaveLength(1);
    // esbuild indents the body of an __esm() initialiser; a top-level statement starts at column 0.
    expect(builds[0]).toMatch(/^\s+ansiStyles = assembleStyles\(\)/);
  });
});

describe('modules plat does not load at start-up', () => {
  it('neither node:child_process (commander\'s, deferred at bundle time) nor node:tty (chalk\'s detection, stubbed)', async () => {
    for (const args of [['status'], ['call', '--help']]) {
      const { loaded } = await runPlatProbed(home, args);
      expect(loaded).toContain('NativeModule vm'); // the probe sees the shim's own load
      expect(loaded.filter((m) => /^NativeModule (child_process|tty)$/.test(m)), `plat ${args.join(' ')}`).toEqual([]);
    }
  });

  it('a logged-in call, token and whoami build neither stdin nor stderr, and load no node:fs/promises, readline, os or perf_hooks', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    for (const args of [['call', 'GET', '/api/courses'], ['token'], ['whoami']]) {
      const { code, stderr, touched, loaded } = await runPlatProbed(home, args);
      expect(code, stderr).toBe(0);
      expect(touched, `plat ${args.join(' ')}`).toEqual([]);
      expect(loaded.filter((m) => /^NativeModule (fs\/promises|internal\/fs\/promises|readline|internal\/readline\/interface|os|perf_hooks)$/.test(m)), `plat ${args.join(' ')}`).toEqual([]);
    }
  });
});

describe('plat mcp and the MCP SDK, which it alone uses', () => {
  it('are a bundle of their own (dist/mcp.cjs): dist/main.cjs and dist/plain.cjs hold none of them', async () => {
    const read = (bundle: string) => readFile(path.join(repoRoot, 'dist', `${bundle}.cjs`), 'latin1');
    const [mcp, main, plain] = [await read('mcp'), await read('main'), await read('plain')];
    for (const module of ['node_modules/@modelcontextprotocol/sdk/', 'node_modules/zod/', 'src/mcp/server.ts', 'src/mcp/tools.ts', 'src/mcp/call.ts', 'src/mcp/sdk.ts']) {
      expect(mcp).toContain(`// ${module}`);
      expect(main).not.toContain(`// ${module}`);
      expect(plain).not.toContain(`// ${module}`);
    }
    // The SDK's ajv provider (elicitation answers, which plat mcp never asks for) is stubbed at build time.
    expect(mcp).not.toContain('// node_modules/ajv/');
    expect(mcp).not.toContain('// node_modules/ajv-formats/');
    // Every other plat module is dist/main.cjs's copy, handed over (one PlatError class, one registry of secrets).
    const own = [...mcp.matchAll(/^\/\/ (src\/\S+)$/gm)].map((m) => m[1]);
    // src/mcp/ is the MCP server's part: all of it but load.ts, the piece dist/main.cjs keeps to load the rest.
    const mcpModules = (await readdir(path.join(repoRoot, 'src', 'mcp'))).filter((name) => name.endsWith('.ts') && name !== 'load.ts');
    expect(new Set(own)).toEqual(new Set(mcpModules.map((name) => `src/mcp/${name}`)));
    expect(mcp).toContain('// plat-main:src/errors.ts');
  });

  it('take from dist/main.cjs only names that mcp/load.ts hands over', async () => {
    const mcp = await readFile(path.join(repoRoot, 'dist', 'mcp.cjs'), 'latin1');
    // esbuild's shapes: a handed-over module is `require_x = __commonJS({ "plat-main:<key>" …`, imported as
    // `import_x = __toESM(require_x(), 1)` and used as `import_x.name`, or destructured from a dynamic import.
    const keyOf = new Map([...mcp.matchAll(/var (require_\w+) = __commonJS\(\{\s*"plat-main:([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
    const imports = [...mcp.matchAll(/var (import_\w+) = __toESM\((require_\w+)\(\), 1\);/g)].filter((m) => keyOf.has(m[2]!));
    const dynamic = [...mcp.matchAll(/const \{ ([^}]+) \} = await Promise\.resolve\(\)\.then\(\(\) => __toESM\((require_\w+)\(\), 1\)\);/g)].filter((m) => keyOf.has(m[2]!));
    // Every use of a handed-over module has one of the two shapes, or this check would miss names.
    const calls = [...mcp.matchAll(/\b(require_\w+)\(\)/g)].filter((m) => keyOf.has(m[1]!));
    expect(calls.length).toBe(imports.length + dynamic.length);
    const used = new Set<string>();
    const aliasKey = new Map(imports.map((m) => [m[1]!, keyOf.get(m[2]!)!]));
    for (const [, alias, name] of mcp.matchAll(/\b(import_\w+)\.(\w+)/g)) if (aliasKey.has(alias!)) used.add(`${aliasKey.get(alias!)} ${name}`);
    for (const [, names, req] of dynamic) for (const name of names!.split(',')) used.add(`${keyOf.get(req!)} ${name.trim().split(':')[0]}`);
    // 20 names today (redact.ts is no longer among them: the secrets are the context's, not a module's).
    expect(used.size).toBeGreaterThanOrEqual(20);
    const { mainModules } = await import('../../src/mcp/load.js');
    const handed = mainModules();
    const missing = [...used].filter((entry) => {
      const [key, name] = entry.split(' ');
      return handed[key!]?.[name!] === undefined;
    });
    expect(missing).toEqual([]);
  });

  it('are loaded by plat mcp, and by no other command', async () => {
    const bundle = path.join(repoRoot, 'dist', 'mcp.cjs');
    for (const args of [['status'], ['op', '--help'], ['mcp', '--help'], ['call', 'GET', '/api/courses', '--base-url', platform.baseUrl]]) {
      const { required } = await runPlatProbed(home, args);
      expect(required, `plat ${args.join(' ')}`).not.toContain(bundle);
    }
    // stdin closes at once: the server starts, answers nothing and ends.
    const mcp = await runPlatProbed(home, ['mcp', '--base-url', platform.baseUrl]);
    expect(mcp.code, mcp.stderr).toBe(0);
    expect(mcp.required).toContain(bundle);
  });
});
