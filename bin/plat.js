#!/usr/bin/env node
// The shim. CommonJS on purpose (bin/package.json): Node 20's ESM loader costs ~8 ms per start, a CommonJS file
// nothing. It loads the program (dist/plain-<command>.cjs or dist/main.cjs, below; dist/refresh.cjs when a plain one
// asks for it) through a V8 code cache kept in the user's
// cache dir (Node 22 has this built in as module.enableCompileCache; Node 20 does not), and hands main()'s exit code
// to Node. Exiting by exitCode rather than process.exit() lets piped stdout drain completely.
// What the code cache buys: ≈8 ms of CPU per start (`plat status`: median 70–73 ms of CPU time with the cache,
// 78–81 ms for the same bundle required without it; 40 runs each, Node 20.20, 2 cores). Held by
// test/cli/startup.test.ts: the cache is written once and then accepted (V8 rejecting it would rewrite it), and
// written again by the first run that succeeds after one that failed wrote it.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/**
 * Eight bytes before V8's data in a code cache file: `plat`, the format (1), 0, 0, and whether the run that wrote it
 * succeeded (1) or failed (0). Eight, so the data after it stays aligned.
 */
const CACHE_HEADER = Buffer.from([0x70, 0x6c, 0x61, 0x74, 1, 0, 0, 0]);

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === '--version') {
  // Scripts call `plat --version` to check for plat: answer without loading the program.
  // Read and parsed here, not require()d: the module loader's resolution, realpath and wrapper for a JSON file cost
  // ~1.2 ms of CPU more (1.4-2.2 ms against 0.3-0.4, Node 20.20), 1.5 % of Node's own start.
  process.stdout.write(`${JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version}\n`);
} else {
  // `plat call <method> <path>`, `plat token` and `plat whoami` without options each have a bundle of their own
  // (dist/plain-call.cjs, …) without commander and the other commands (src/dispatch.ts, src/build/build.mjs): a
  // fraction of the text to read and of the code cache to deserialise. That bundle says which arguments it runs;
  // for any other it hands over to the whole program.
  const plainWords = /^(call|token|whoami)$/.test(args[0] ?? '') && !args.some((arg) => arg.startsWith('-'));
  let program = load(plainWords ? `plain-${args[0]}` : 'main');
  if (plainWords && !program.runsPlainly(process.argv)) program = load('main');
  // A bundle the program loads on use (dist/refresh.cjs: src/session/tokens/refresh-bundle.ts), through a code cache of
  // its own like the program's, written as the process ends.
  globalThis.__platLoadBundle = (bundle) => {
    const loaded = load(bundle);
    process.once('exit', loaded.saveCache);
    return loaded.exports;
  };
  const { main, saveCache } = program;
  main().then((code) => {
    process.exitCode = code;
    // As the process ends, not here: what runs after main() (a connection's release, the last writes) is compiled
    // by then and goes into the cache too, where a cache taken here left it to be compiled at every start.
    process.once('exit', saveCache);
    // Nothing should be left running; if something is (a keychain call that timed out cannot be cancelled), do
    // not hang the caller's script. unref: this timer alone never keeps plat alive.
    setTimeout(() => process.exit(process.exitCode), 2000).unref();
  });
}

function load(bundle) {
  const { Script } = require('node:vm');
  const file = path.join(__dirname, '..', 'dist', `${bundle}.cjs`);
  // latin1: the bundle is ASCII (src/build/build.mjs makes sure), and a latin1 read is a plain copy where utf8 is a
  // decode: ~1 ms less per start.
  const bundleBytes = fs.readFileSync(file);
  const source = bundleBytes.toString('latin1');
  const cacheFile = codeCachePath(bundle, file);
  let cachedData;
  let cachedBySuccess = false;
  try {
    const bytes = cacheFile && readReusing(cacheFile, bundleBytes);
    if (bytes && bytes.length > CACHE_HEADER.length && bytes.subarray(0, 7).equals(CACHE_HEADER.subarray(0, 7))) {
      cachedBySuccess = bytes[7] === 1;
      // A view past the header, still 8-aligned as V8 wants its data (it copies data that is not).
      cachedData = bytes.subarray(CACHE_HEADER.length);
    }
  } catch {
    cachedData = undefined;
  }
  // The bundle is a function expression (src/build/build.mjs wraps it), as Node's own CommonJS wrapper would be.
  const script = new Script(source, {
    filename: file,
    cachedData,
  });
  // A vm.Script cannot import() on Node 20 without an experimental flag; the bundle borrows this file's import()
  // for the few ESM-only packages it loads on demand (src/esm.ts).
  globalThis.__platImport = (specifier) => import(specifier);
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, require, mod, file, path.dirname(file));
  return {
    exports: mod.exports,
    main: mod.exports.main,
    runsPlainly: mod.exports.runsPlainly,
    saveCache(exitCode) {
      // Written at the end of a run, so it holds the functions that run compiled, and then used as is, unless V8
      // refused it or it came from a run that failed: a first `plat call` that stopped early (not logged in, a bad
      // URL) would otherwise leave every later call to compile the rest of its path anew (a successful call 1.03 of
      // the time with such a cache), until plat or Node is upgraded.
      const succeeded = exitCode === 0;
      if (!cacheFile || (cachedData && !script.cachedDataRejected && (cachedBySuccess || !succeeded))) return;
      try {
        fs.mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
        const temp = `${cacheFile}.${process.pid}.tmp`;
        const header = Buffer.from(CACHE_HEADER);
        header[7] = succeeded ? 1 : 0;
        fs.writeFileSync(temp, Buffer.concat([header, script.createCachedData()]), { mode: 0o600 });
        fs.renameSync(temp, cacheFile);
        forgetOtherBuilds(bundle, cacheFile);
      } catch {
        // a read-only cache dir only costs speed
      }
    },
  };
}

/**
 * A file's bytes, read into `spare` when they fit (the bundle's bytes, no longer needed once its string is made)
 * rather than into a buffer of their own: every page a process touches first costs a page fault (~11 µs each on the
 * VMs these figures come from), and a code cache is ~45 pages that the bundle's buffer already has.
 */
function readReusing(file, spare) {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const into = size <= spare.length ? spare : Buffer.allocUnsafe(size);
    let length = 0;
    while (length < size) {
      const read = fs.readSync(fd, into, length, size - length, length);
      if (read === 0) break;
      length += read;
    }
    return into.subarray(0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Each upgrade (or rebuild) of plat, and each Node upgrade, starts new cache files: remove the ones of other builds
 * when writing one, so the cache dir does not grow with every release (~250 KB per command). Only those a day old:
 * two plats installed side by side (a global one and a project's) then keep one cache each instead of rewriting
 * each other's on every run.
 */
function forgetOtherBuilds(bundle, cacheFile) {
  const dir = path.dirname(cacheFile);
  const build = path.basename(cacheFile).replace(/[^-]+\.bin$/, '');
  const dayAgo = Date.now() - 86_400_000;
  for (const name of fs.readdirSync(dir)) {
    // This bundle's caches, and those of plats before the bundle's name was part of it (v8-…) or before each plain
    // form had a bundle of its own (plain-v8-…).
    const ours = name.startsWith(`${bundle}-v8-`) || name.startsWith('v8-') || name.startsWith('plain-v8-');
    if (!ours || name.startsWith(build)) continue;
    try {
      const file = path.join(dir, name);
      if (fs.statSync(file).mtimeMs < dayAgo) fs.unlinkSync(file);
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/**
 * Keyed by the bundle, Node's version and the bundle's size and mtime, so a rebuilt or upgraded plat never reuses a
 * stale cache, and by command.
 */
function codeCachePath(bundle, file) {
  try {
    const { size, mtimeMs } = fs.statSync(file);
    // os.homedir() reads HOME first on Unix; node:os itself is not loaded for it (0.2 ms).
    const home = (process.platform !== 'win32' && process.env.HOME) || require('node:os').homedir();
    const base =
      process.platform === 'win32'
        ? path.join(process.env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'plat', 'Cache')
        : process.platform === 'darwin'
          ? path.join(home, 'Library', 'Caches', 'plat')
          : path.join(process.env.XDG_CACHE_HOME || path.join(home, '.cache'), 'plat');
    // One cache per command: a cache holds the functions its first run compiled, so `plat call` reusing the one
    // `plat login` wrote would compile its own code anew on every run (1-3 ms of CPU per start).
    const command = args.find((arg) => !arg.startsWith('-'));
    const key = command && /^[a-z]{2,16}$/.test(command) ? command : 'other';
    return path.join(base, `${bundle}-v8-${process.version}-${size}-${Math.floor(mtimeMs)}-${key}.bin`);
  } catch {
    return undefined;
  }
}
