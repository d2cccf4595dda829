/**
 * The start-up tricks must keep working, or plat silently gets slower: the V8 code cache of bin/plat.js, the
 * bundle's latin1 read (it must be ASCII), chalk initialised on first use, commander with node:child_process deferred (src/build/build.mjs), chalk
 * without its terminal detection (node:tty), standard streams built only when used (main.ts, terminal/io.ts), and no
 * node:fs/promises on the token path (store/atomic.ts), plat mcp with the MCP SDK in a bundle of their own that
 * only plat mcp loads, and the token endpoint's path and DPoP in one the plain forms load only to refresh or sign.
 * Each would break without an error, so each is checked from outside, on the built CLI.
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { platBin, repoRoot, runPlatProbed } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { definedEnv } from '../helpers/env.js';

/**
 * Whether a bundle holds a module: esbuild names each in a comment by its path from the checkout, which for a
 * package is `node_modules/…`, or `../<elsewhere>/node_modules/…` where node_modules is a link (a worktree's).
 */
function holds(bundle: string, module: string): boolean {
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^// (?:\\.\\./[^\\n]*?/)?${escaped}`, 'm').test(bundle);
}

/**
 * The bundles that ran with this cache dir (XDG_CACHE_HOME): bin/plat.js keeps each bundle's code cache under the
 * bundle's name (`<bundle>-v8-…`), so the files left say which bundles ran.
 */
async function bundlesThatRan(cacheDir: string): Promise<string[]> {
  return (await readdir(path.join(cacheDir, 'plat'))).map((name) => name.split('-v8-')[0]!).sort();
}

/**
 * The `<key> <name>` pairs a bundle takes from the one that loads it (dist/mcp.cjs from dist/main.cjs, dist/refresh.cjs
 * from a plain bundle). esbuild's shapes: a handed-over module is `require_x = __commonJS({ "<namespace>:<key>" …`,
 * imported as `import_x = __toESM(require_x(), 1)` and used as `import_x.name`, or destructured from a dynamic import.
 */
function takenNames(bundle: string, namespace: string): Set<string> {
  const keyOf = new Map([...bundle.matchAll(new RegExp(`var (require_\\w+) = __commonJS\\(\\{\\s*"${namespace}:([^"]+)"`, 'g'))].map((m) => [m[1]!, m[2]!]));
  // `var import_x = …` at the top level; `import_x = …` alone in a module's lazy initialiser (__esm).
  const imports = [...bundle.matchAll(/(?:var |^\s+)(import_\w+) = __toESM\((require_\w+)\(\), 1\);/gm)].filter((m) => keyOf.has(m[2]!));
  const dynamic = [...bundle.matchAll(/const \{ ([^}]+) \} = await Promise\.resolve\(\)\.then\(\(\) => __toESM\((require_\w+)\(\), 1\)\);/g)].filter((m) => keyOf.has(m[2]!));
  // Every use of a handed-over module has one of the two shapes, or this check would miss names.
  const calls = [...bundle.matchAll(/\b(require_\w+)\(\)/g)].filter((m) => keyOf.has(m[1]!));
  expect(keyOf.size).toBeGreaterThan(0);
  expect(calls.length).toBe(imports.length + dynamic.length);
  const used = new Set<string>();
  const aliasKey = new Map(imports.map((m) => [m[1]!, keyOf.get(m[2]!)!]));
  for (const [, alias, name] of bundle.matchAll(/\b(import_\w+)\.(\w+)/g)) if (aliasKey.has(alias!)) used.add(`${aliasKey.get(alias!)} ${name}`);
  for (const [, names, req] of dynamic) for (const name of names!.split(',')) used.add(`${keyOf.get(req!)} ${name.trim().split(':')[0]}`);
  return used;
}

/** The pairs of `used` that `handed` (a hand-over list: module key → names) lacks. */
function notHandedOver(used: Set<string>, handed: Record<string, Record<string, unknown>>): string[] {
  return [...used].filter((entry) => {
    const [key, name] = entry.split(' ');
    return handed[key!]?.[name!] === undefined;
  });
}

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

  it('is read whatever its size against the bundle\'s (into the bundle\'s bytes when it fits); one V8 refuses is replaced', async () => {
    // bin/plat.js reads the cache into the bundle's own buffer when it fits, into one of its own when not.
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const { size } = await stat(path.join(repoRoot, 'dist', 'plain-call.cjs'));
    const env = { XDG_CACHE_HOME: path.join(home.dir, 'sized caches') };
    const call = async () => {
      const result = await home.run(['call', 'GET', '/api/courses'], { env, discardStdout: true });
      expect(result.code, result.stderr).toBe(0);
      const [name] = await readdir(path.join(env.XDG_CACHE_HOME, 'plat'));
      const file = path.join(env.XDG_CACHE_HOME, 'plat', name!);
      const { ino, mtimeMs } = await stat(file);
      return { file, ino, mtimeMs };
    };
    const written = await call();
    // Made larger than the bundle: V8 ignores bytes after its data (it checks that its data fits, not that nothing
    // follows), so the cache is used as is only if it was read whole into a buffer of its own.
    await appendFile(written.file, Buffer.alloc(size));
    const grown = await stat(written.file);
    expect(await call()).toEqual({ file: written.file, ino: grown.ino, mtimeMs: grown.mtimeMs });
    // Bytes V8 cannot use, under the plat header, larger and smaller than the bundle: refused, and written anew.
    for (const bytes of [size + 4096, 4096]) {
      await writeFile(written.file, Buffer.concat([Buffer.from([0x70, 0x6c, 0x61, 0x74, 1, 0, 0, 1]), Buffer.alloc(bytes, 0x5a)]));
      await call();
      const again = await readFile(written.file);
      expect(again.length, String(bytes)).not.toBe(8 + bytes);
      expect(again.subarray(8, 16).equals(Buffer.alloc(8, 0x5a)), String(bytes)).toBe(false);
    }
  });

  it('covers what a run compiles: a second plat call compiles none of its bundle anew, what runs after main() included', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const env = { ...definedEnv(home.env), XDG_CACHE_HOME: path.join(home.dir, 'hot path cache') };
    // V8 logs each function it compiles. The same flags both times (the log's name is one), so the second run may
    // use the first one's cache: V8 refuses a cache made under other flags.
    const log = path.join(home.dir, 'functions.log');
    const run = async () => {
      const args = ['--log-function-events', `--logfile=${log}`, '--no-logfile-per-isolate', platBin, 'call', 'GET', '/api/courses'];
      // Pipes, as a script's (a terminal on stdin and stderr would make it the whole program, dist/main.cjs, which
      // alone can ask a question).
      const child = spawn(process.execPath, args, { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'ignore', 'pipe'] });
      child.stdin!.end();
      child.stderr!.resume();
      expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
      const lines = (await readFile(log, 'latin1')).split('\n').map((line) => line.split(','));
      const bundle = path.join(repoRoot, 'dist', 'plain-call.cjs');
      const id = lines.find((f) => f[0] === 'script-details' && f[2] === bundle)?.[1];
      expect(id, log).toBeDefined();
      const events = lines.filter((f) => f[2] === id && (f[0] === 'function' || f[0] === 'script')).map((f) => f[1]);
      return { deserialized: events.includes('deserialize'), compiled: lines.filter((f) => f[0] === 'function' && f[2] === id && /^(parse-function|full-parse|parse-script)$/.test(f[1]!)).map((f) => f.at(-1)) };
    };
    const first = await run();
    expect(first.deserialized).toBe(false);
    expect(first.compiled.length).toBeGreaterThan(50);
    const second = await run();
    expect(second.deserialized).toBe(true);
    // Before the cache was taken at the process's end: InFlight.release (the connection's, after main()) each run.
    expect(second.compiled).toEqual([]);
  });

  it('is written again by the first run that succeeds after one that failed wrote it, then used as is whatever later runs do', async () => {
    const cacheDir = path.join(home.dir, 'failed first cache');
    const env = { XDG_CACHE_HOME: cacheDir };
    const cache = async () => {
      const [file, ...more] = await readdir(path.join(cacheDir, 'plat'));
      expect(more).toEqual([]);
      const full = path.join(cacheDir, 'plat', file!);
      const { ino, mtimeMs, size } = await stat(full);
      // The header's last byte says whether the run that wrote it succeeded.
      return { name: file, ino, mtimeMs, size, bySuccess: (await readFile(full))[7] };
    };
    // A first call that stops early (no session yet): its cache holds the functions of that short path alone.
    expect((await home.run(['call', 'GET', '/api/courses'], { env })).code).not.toBe(0);
    const failed = await cache();
    expect(failed.name).toMatch(/^plain-call-v8-.*-call\.bin$/);
    expect(failed.bySuccess).toBe(0);
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    // The first call that succeeds writes it again, with the functions of the whole path.
    expect((await home.run(['call', 'GET', '/api/courses'], { env, discardStdout: true })).code).toBe(0);
    const succeeded = await cache();
    expect(succeeded.bySuccess).toBe(1);
    expect([succeeded.ino, succeeded.mtimeMs]).not.toEqual([failed.ino, failed.mtimeMs]);
    expect(succeeded.size).toBeGreaterThan(failed.size);
    // Then it stays, after calls that succeed and calls that fail alike (V8 accepting it each time).
    for (const target of ['/api/courses', 'http://[bad']) {
      expect((await home.run(['call', 'GET', target], { env, discardStdout: true })).code).toBe(target.startsWith('/') ? 0 : 2);
      const later = await cache();
      expect([later.ino, later.mtimeMs, later.bySuccess], target).toEqual([succeeded.ino, succeeded.mtimeMs, 1]);
    }
  });

  it('is still accepted after a run that streamed a large body (the GC it forces leaves V8\'s flags as they were)', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const cacheDir = path.join(home.dir, 'download cache');
    const env = { XDG_CACHE_HOME: cacheDir };
    const download = ['call', 'GET', `/api/download?bytes=${8 * 1024 * 1024}`];
    expect((await home.run(download, { env, discardStdout: true })).code).toBe(0);
    const [file, ...more] = await readdir(path.join(cacheDir, 'plat'));
    expect(more).toEqual([]);
    const first = await stat(path.join(cacheDir, 'plat', file!));
    // V8 refuses a cache made under other flags: with --expose-gc left set, each such run wrote it anew.
    for (const args of [download, ['call', 'GET', '/api/courses'], download]) {
      expect((await home.run(args, { env, discardStdout: true })).code).toBe(0);
      const later = await stat(path.join(cacheDir, 'plat', file!));
      expect([later.ino, later.mtimeMs], args.join(' ')).toEqual([first.ino, first.mtimeMs]);
    }
  });

  it("removes other builds' caches a day old when it writes one, and keeps the rest", async () => {
    const cacheDir = path.join(home.dir, 'pruned cache');
    const dir = path.join(cacheDir, 'plat');
    await mkdir(dir, { recursive: true });
    const build = async (bundle: string) => {
      const { size, mtimeMs } = await stat(path.join(repoRoot, 'dist', `${bundle}.cjs`));
      return `${bundle}-v8-${process.version}-${size}-${Math.floor(mtimeMs)}-`;
    };
    const [thisBuild, thisPlainBuild] = [await build('main'), await build('plain-token')];
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    const files = {
      oldRelease: 'main-v8-v20.11.0-500000-1700000000000-status.bin',
      oldReleaseOtherCommand: 'main-v8-v20.11.0-500000-1700000000000-call.bin',
      beforeBundleNames: 'v8-v20.11.0-500000-1700000000000-call.bin',
      sharedPlainBundle: 'plain-v8-v20.20.2-363103-1796185849870-call.bin', // before each plain form had its own
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

describe('the bundles of the plain forms (dist/plain-call.cjs, dist/plain-token.cjs, dist/plain-whoami.cjs)', () => {
  const read = (bundle: string) => readFile(path.join(repoRoot, 'dist', `${bundle}.cjs`), 'latin1');

  it('are main.ts built for one plain form each, without commander, the other commands or the other forms', async () => {
    const whole = await read('main');
    const own = {
      call: ['src/commands/call/call.ts', 'src/requests/prepare.ts'],
      token: ['src/commands/auth/token.ts'],
      whoami: ['src/commands/auth/whoami.ts'],
    };
    for (const [command, modules] of Object.entries(own)) {
      const plain = await read(`plain-${command}`);
      // esbuild names each module it bundles in a comment.
      for (const module of ['src/main.ts', 'src/dispatch.ts', ...modules]) expect(holds(plain, `${module}\n`), `${command}: ${module}`).toBe(true);
      const others = Object.entries(own).filter(([other]) => other !== command).flatMap(([, list]) => list);
      for (const module of [...others, 'node_modules/commander/', 'src/cli.ts', 'src/commands/auth/login.ts', 'src/commands/op/op.ts', 'src/batch/engine.ts', 'src/completion/']) {
        expect(holds(plain, module), `${command}: ${module}`).toBe(false);
        expect(holds(whole, module), module).toBe(true);
      }
    }
    // The plain form of call has no flags: what only a flag runs (--jq, --paginate, --ndjson: call/json.ts, jq, paging)
    // is left out of its bundle (call.ts's PLAT_PLAIN_BUNDLE condition), and is in the whole program.
    const plainCall = await read('plain-call');
    for (const module of ['src/commands/call/json.ts', 'src/terminal/jq.ts', 'src/session/paging/paginate.ts', 'src/session/paging/text.ts']) {
      expect(holds(plainCall, module), `call: ${module}`).toBe(false);
      expect(holds(whole, module), module).toBe(true);
    }
  });

  it('hold no more text than each start needs: a byte bound per bundle (one shared plain bundle was 363,103 bytes)', async () => {
    // Each byte is read and paged in twice per start (the file, then the string V8 compiles), and the code cache
    // holds every function the bundle declares. Measured 2026-12-02: 349,323 / 272,894 / 288,369 bytes; DPoP took
    // them to 372,306 / 294,919 / 308,070, and the token endpoint's path and DPoP in dist/refresh.cjs (below) to
    // 238,813 / 161,418 / 174,597 (dist/refresh.cjs: 142,356, read only to refresh or on a bound session), and
    // leaving what only call's flags run out of plain-call (call/json.ts, jq, paging) to 202,921. The keychain
    // read's D-Bus code, rewritten to allocate little (one buffer per message, values read in place), took them
    // from 203,784 / 162,659 / 176,116 to 207,039 / 165,909 / 179,366: 3.3 KB on the path every keychain start
    // runs, for ~150 KiB less of its young allocation (a keychain call 0.97 of the wall time). A reply's header
    // read without strings for the fields plat ignores, calls written without nested arrays, signals skipped by
    // their type byte (2026-12-03): 207,877 / 166,747 / 180,204 to 210,755 / 169,625 / 183,082, 2.9 KB on the same
    // path for ~7 KiB less young allocation, which takes a keychain call from 17 scavenges in 20 runs to 1 (the
    // bench README says why that line matters). The bounds leave ~0.5 % for growth. Past one, move what the
    // command does not run off its path (a lazy import that esbuild can leave out, a bundle of its own) rather
    // than raise it.
    const bounds = { 'plain-call': 211_800, 'plain-token': 170_400, 'plain-whoami': 184_000, refresh: 143_800 };
    for (const [bundle, bound] of Object.entries(bounds)) {
      expect((await read(bundle)).length, `dist/${bundle}.cjs`).toBeLessThanOrEqual(bound);
    }
  });

  it('runs the plain forms, and bin/plat.js hands every other command line to dist/main.cjs', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const cacheDir = path.join(home.dir, 'bundles');
    const env = { XDG_CACHE_HOME: cacheDir };
    // Each bundle keeps its code cache under its own name: the caches say which bundle ran.
    const ranBy = async (args: string[]) => {
      await rm(cacheDir, { recursive: true, force: true });
      const result = await home.run(args, { env });
      const [bundle, ...more] = await bundlesThatRan(cacheDir);
      expect(more).toEqual([]);
      return { ...result, bundle };
    };
    for (const args of [['call', 'GET', '/api/courses'], ['token'], ['whoami']]) {
      expect(await ranBy(args), `plat ${args.join(' ')}`).toMatchObject({ code: 0, bundle: `plain-${args[0]}` });
    }
    expect(await ranBy(['call', 'GET', '/api/courses', '-i'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^HTTP\/1\.1 200/), bundle: 'main' });
    // Words the plain bundle looks at and does not run: commander's usage errors, from the whole program.
    expect(await ranBy(['token', 'extra'])).toMatchObject({ code: 2, stderr: expect.stringContaining("too many arguments for 'token'"), bundle: 'main' });
    expect(await ranBy(['call', 'GET'])).toMatchObject({ code: 2, stderr: expect.stringContaining('plat call needs a path after the method'), bundle: 'main' });
  });

  it('run with stdin and stderr on /dev/null, as cron, systemd and hyperfine start a program (a character device, not a terminal)', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const cacheDir = path.join(home.dir, 'devnull');
    const env = { ...definedEnv(home.env), XDG_CACHE_HOME: cacheDir };
    for (const args of [['call', 'GET', '/api/courses'], ['token'], ['whoami']]) {
      await rm(cacheDir, { recursive: true, force: true });
      // 'ignore' is Node's /dev/null for stdin and stderr; stdout a pipe, read to its end.
      const child = spawn(process.execPath, [platBin, ...args], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d));
      expect(await new Promise((resolve) => child.on('close', resolve)), `plat ${args.join(' ')}`).toBe(0);
      expect(stdout.length, `plat ${args.join(' ')}`).toBeGreaterThan(0);
      // The whole program would have left main-v8-….
      expect(await bundlesThatRan(cacheDir), `plat ${args.join(' ')}`).toEqual([`plain-${args[0]}`]);
    }
  });

  it('at a terminal: plat token, which asks nothing, runs its own; call and whoami, which may ask to step up, the whole program', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const cacheDir = path.join(home.dir, 'terminal');
    // A person at a terminal: not in CI (where plat never asks), and nothing saying not to ask.
    const person = { ...home.env, CI: undefined, PLAT_NO_PROMPT: undefined };
    const env = { ...definedEnv(person), XDG_CACHE_HOME: cacheDir };
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    for (const [args, bundle] of [[['token'], 'plain-token'], [['call', 'GET', '/api/courses'], 'main'], [['whoami'], 'main']] as const) {
      await rm(cacheDir, { recursive: true, force: true });
      // script(1) gives the command a real terminal on stdin, stdout and stderr (stdout sent on to /dev/null).
      const line = `${[process.execPath, platBin, ...args].map(quote).join(' ')} >/dev/null`;
      const child = spawn('script', ['-qec', line, '/dev/null'], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.resume();
      child.stderr!.resume();
      expect(await new Promise((resolve) => child.on('close', resolve)), `plat ${args.join(' ')}`).toBe(0);
      expect(await bundlesThatRan(cacheDir), `plat ${args.join(' ')}`).toEqual([bundle]);
    }
  });
});

describe('dist/refresh.cjs: the token endpoint\'s path and DPoP, which a plain start with a fresh bearer token never runs', () => {
  const read = (bundle: string) => readFile(path.join(repoRoot, 'dist', `${bundle}.cjs`), 'latin1');
  /** What it holds that each plain start read and compiled before (issue 42: ~140 KB of plain-call's 372 KB). */
  const REFRESH_ONLY = ['node_modules/oauth4webapi/', 'node_modules/proper-lockfile/', 'node_modules/graceful-fs/', 'src/oauth/tokens.ts', 'src/oauth/discovery.ts', 'src/oauth/dpop.ts', 'src/store/lock.ts'];

  it('holds oauth4webapi, the refresh, discovery, DPoP and the lock, which no plain bundle holds; they hold its plat modules once', async () => {
    const refresh = await read('refresh');
    const own = [...refresh.matchAll(/^\/\/ (src\/\S+)$/gm)].map((m) => m[1]!);
    for (const command of ['call', 'token', 'whoami']) {
      const plain = await read(`plain-${command}`);
      for (const module of REFRESH_ONLY) {
        expect(holds(refresh, module), module).toBe(true);
        expect(holds(plain, module), `plain-${command}: ${module}`).toBe(false);
      }
      // One copy of each plat module in a process: what dist/refresh.cjs holds, the plain bundle does not.
      for (const module of own) expect(holds(plain, `${module}\n`), `plain-${command}: ${module}`).toBe(false);
      // dist/main.cjs keeps them all (login runs them), and loads no dist/refresh.cjs.
      expect(holds(await read('main'), 'node_modules/oauth4webapi/')).toBe(true);
    }
    expect(refresh).toContain('// plat-plain:src/errors.ts');
  });

  it('takes from the plain bundles only names that session/tokens/refresh-bundle.ts hands over', async () => {
    const used = takenNames(await read('refresh'), 'plat-plain');
    expect(used.size).toBeGreaterThanOrEqual(15);
    const { plainModules } = await import('../../src/session/tokens/refresh-bundle.js');
    expect(notHandedOver(used, plainModules())).toEqual([]);
  });

  it('is loaded by a plain call that must refresh, through a code cache of its own that the next one accepts, and not by one with a fresh token', async () => {
    const cacheDir = path.join(home.dir, 'refresh cache');
    const env = { XDG_CACHE_HOME: cacheDir };
    const caches = async () => (await readdir(path.join(cacheDir, 'plat'))).sort();
    const call = async () => {
      const result = await home.run(['call', 'GET', '/api/courses'], { env });
      expect(result.code, result.stderr).toBe(0);
    };
    /** A session whose token has expired (at the server too), so the next call refreshes it. */
    const expired = async () => {
      platform.knobs.accessTokenTtl = 1;
      expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
      platform.knobs.accessTokenTtl = 3600;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      platform.stats.reset();
    };
    try {
      expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
      await call();
      expect(await bundlesThatRan(cacheDir)).toEqual(['plain-call']);

      await expired();
      await call();
      expect(platform.stats.count('token:refresh_token')).toBe(1);
      const cache = (await caches()).find((name) => name.startsWith('refresh-v8-'));
      expect(cache, (await caches()).join(', ')).toMatch(/^refresh-v8-.*-call\.bin$/);
      const first = await stat(path.join(cacheDir, 'plat', cache!));

      await expired();
      await call();
      expect(platform.stats.count('token:refresh_token')).toBe(1);
      // Accepted as is: V8 rejecting it would have it written anew.
      const later = await stat(path.join(cacheDir, 'plat', cache!));
      expect([later.ino, later.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
      expect((await caches()).length).toBe(2);
    } finally {
      platform.knobs.accessTokenTtl = 3600;
    }
  });
});

describe('the bundle bin/plat.js reads as latin1', () => {
  it('is ASCII, so latin1 and utf8 read the same text (and the code cache V8 keys by it stays valid)', async () => {
    for (const bundle of ['main.cjs', 'plain-call.cjs', 'plain-token.cjs', 'plain-whoami.cjs', 'refresh.cjs']) {
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

  it('plat --version reads package.json without the module loader (no require of it: ~1.2 ms of CPU)', async () => {
    const { code, stdout, required } = await runPlatProbed(home, ['--version']);
    expect(code).toBe(0);
    const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(stdout).toBe(`${pkg.version}\n`);
    expect(required.filter((file) => file.endsWith('.json'))).toEqual([]);
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
  it('are a bundle of their own (dist/mcp.cjs): dist/main.cjs and the plain bundles hold none of them', async () => {
    const read = (bundle: string) => readFile(path.join(repoRoot, 'dist', `${bundle}.cjs`), 'latin1');
    const [mcp, main, plain] = [await read('mcp'), await read('main'), (await Promise.all(['call', 'token', 'whoami'].map((c) => read(`plain-${c}`)))).join('\n')];
    for (const module of ['node_modules/@modelcontextprotocol/sdk/', 'node_modules/zod/', 'src/mcp/server.ts', 'src/mcp/tools.ts', 'src/mcp/call.ts', 'src/mcp/sdk.ts']) {
      expect(holds(mcp, module), module).toBe(true);
      expect(holds(main, module), module).toBe(false);
      expect(holds(plain, module), module).toBe(false);
    }
    // The SDK's ajv provider (elicitation answers, which plat mcp never asks for) is stubbed at build time.
    expect(holds(mcp, 'node_modules/ajv/')).toBe(false);
    expect(holds(mcp, 'node_modules/ajv-formats/')).toBe(false);
    // Every other plat module is dist/main.cjs's copy, handed over (one PlatError class, one registry of secrets).
    const own = [...mcp.matchAll(/^\/\/ (src\/\S+)$/gm)].map((m) => m[1]);
    // src/mcp/ is the MCP server's part: all of it but load.ts, the piece dist/main.cjs keeps to load the rest.
    const mcpModules = (await readdir(path.join(repoRoot, 'src', 'mcp'))).filter((name) => name.endsWith('.ts') && name !== 'load.ts');
    expect(new Set(own)).toEqual(new Set(mcpModules.map((name) => `src/mcp/${name}`)));
    expect(mcp).toContain('// plat-main:src/errors.ts');
  });

  it('take from dist/main.cjs only names that mcp/load.ts hands over', async () => {
    const used = takenNames(await readFile(path.join(repoRoot, 'dist', 'mcp.cjs'), 'latin1'), 'plat-main');
    // 20 names today (redact.ts is no longer among them: the secrets are the context's, not a module's).
    expect(used.size).toBeGreaterThanOrEqual(20);
    const { mainModules } = await import('../../src/mcp/load.js');
    expect(notHandedOver(used, mainModules())).toEqual([]);
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
