// Bundles src/ into dist/main.cjs, dist/plain-<command>.cjs and dist/refresh.cjs (below): each one CommonJS function body, which bin/plat.js
// compiles through a V8 code cache, because Node 20 loads one CommonJS file far faster than a graph of ES modules
// (its ESM loader costs ~20 ms of start-up per invocation). Modules that only some commands need are still
// initialised lazily: esbuild turns our `await import('./x.js')` into a deferred initialiser, so their code is
// parsed but not run. ESM-only packages used by few commands (ora, open) and the ones plat needs only in rare cases
// (undici: only behind a proxy; keytar: a native addon; jq-web: --jq, a 2.7 MB WebAssembly file it finds beside
// itself; ajv: plat op's body check, 280 KB the bundle would otherwise carry into every start; re2js: the engine for
// an API description's patterns, needed only when one is checked) stay outside and are
// imported on use.
import { build } from 'esbuild';
import { copyFile, cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
await rm(new URL('../../dist', import.meta.url), { recursive: true, force: true });
// The program four times: dist/main.cjs, all of it, and dist/plain-<command>.cjs, the same entry with PLAT_PLAIN_BUNDLE
// set, which leaves out commander and every command but the one plain form main.ts runs without it (src/dispatch.ts).
// bin/plat.js loads those for them: a fraction of the text to read and compile on the starts scripts make most.
// plat mcp (src/mcp/, but for load.ts) and the MCP SDK it alone uses (with zod, ~350 KB in all) are a bundle of their own,
// dist/mcp.cjs, which src/mcp/load.ts requires on use. Inside dist/main.cjs the command's own 29 KB alone
// made every other start read more text and a code cache 6.7 KB larger (plat status); left as ES modules in
// node_modules the SDK costs plat mcp 150-250 ms of loading, against ~25 ms as one CommonJS file.
const MCP_BUNDLE = 'mcp.cjs';
/** The plain forms (src/dispatch.ts), each with a bundle of its own that bin/plat.js loads for it. */
const PLAIN_COMMANDS = ['call', 'token', 'whoami'];
/** What every bundle shares: one CommonJS file for Node 20, with a linked source map. */
const common = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', sourcemap: 'linked', legalComments: 'none', logLevel: 'warning' };
const program = {
  ...common,
  entryPoints: ['src/main.ts'],
  external: ['@github/keytar', 'ajv', 'open', 'ora', 'undici', 'jq-web', 're2js'],
  // The bundle is the body of the function bin/plat.js compiles, wrapped here rather than by concatenating strings
  // there: one 580 KB copy fewer per start, and with it one of the two scavenges a `plat call` made (~0.5 ms).
  banner: { js: '(function (exports, require, module, __filename, __dirname) {' },
  footer: { js: '})' },
  plugins: [lazyChildProcessInCommander(), chalkWithoutDetection()],
};
// The plain forms' bundle is one per command (dist/plain-call.cjs, -token, -whoami: PLAT_PLAIN_COMMAND, src/dispatch.ts):
// a start pays to read the text of its bundle and to deserialise a code cache that holds every function the bundle
// declares, used or not, so `plat token` no longer carries the HTTP client, the output formats and paging of
// `plat call`, nor `plat call` UserInfo (issue 42: token's bundle is 40 % of the shared one it had).
// What a plain start with a fresh bearer token never runs, the token endpoint's path (refresh: oauth4webapi,
// oauth/tokens.ts and discovery; the refresh lock: proper-lockfile and graceful-fs) and DPoP's proofs (oauth/dpop.ts),
// is a bundle of its own beside the plain ones, dist/refresh.cjs, loaded on first use (src/session/tokens/refresh-bundle.ts):
// in one CommonJS file esbuild keeps what `await import()` reaches, so each plain start read and compiled ~140 KB of it
// (issue 42). These are the modules the plain bundles import from it; what they import in turn comes with them,
// but for the plain bundles' own modules, which refresh-bundle.ts hands over (one copy of each: one PlatError class,
// one DPoP-Nonce memory). dist/main.cjs keeps them all: login and the other commands run them.
const REFRESH_BUNDLE = 'refresh';
const REFRESH_ENTRIES = ['src/oauth/tokens.ts', 'src/oauth/discovery.ts', 'src/oauth/dpop.ts', 'src/store/lock.ts'];
const REFRESH_LOADER = 'src/session/tokens/refresh-bundle.ts';
/** Every plat module a plain bundle holds (from esbuild's metafile): dist/refresh.cjs takes these from it. */
const inPlainBundles = new Set();
const bundles = [['main', false], ...PLAIN_COMMANDS.map((command) => [`plain-${command}`, true, command])];
for (const [name, plainOnly, command] of bundles) {
  const outfile = `dist/${name}.cjs`;
  const { metafile } = await build({
    ...program,
    ...(plainOnly ? { plugins: [...program.plugins, modulesFromRefreshBundle()], metafile: true } : {}),
    outfile,
    define: {
      PLAT_VERSION: JSON.stringify(pkg.version),
      PLAT_PLAIN_BUNDLE: String(plainOnly),
      PLAT_MCP_BUNDLE: JSON.stringify(MCP_BUNDLE),
      ...(command ? { PLAT_PLAIN_COMMAND: JSON.stringify(command) } : {}),
    },
  });
  await asciiOnly(outfile);
  // What is in the output (esbuild lists every module it parsed, those it left out whole too).
  const inputs = metafile ? metafile.outputs[outfile].inputs : {};
  for (const [input, { bytesInOutput }] of Object.entries(inputs)) if (input.startsWith('src/') && bytesInOutput > 0) inPlainBundles.add(input);
}

const refreshPlainModules = new Set();
await build({
  ...program,
  entryPoints: undefined,
  stdin: {
    // The modules, keyed as the plain bundles ask for them (refresh-bundle.ts, refreshModule), each initialised when
    // first asked for: a bound session's proof runs oauth/dpop.ts, not oauth4webapi's initialisation.
    contents: `export const modules = { ${REFRESH_ENTRIES.map((key) => `get ${JSON.stringify(key)}() { return require(${JSON.stringify(`./${key}`)}); }`).join(', ')} };`,
    resolveDir: fileURLToPath(new URL('../../', import.meta.url)),
    sourcefile: 'refresh-entry.ts',
    loader: 'ts',
  },
  outfile: `dist/${REFRESH_BUNDLE}.cjs`,
  plugins: [...program.plugins, modulesFromPlain(inPlainBundles, refreshPlainModules)],
  define: { PLAT_VERSION: JSON.stringify(pkg.version) },
});
await asciiOnly(`dist/${REFRESH_BUNDLE}.cjs`);
// Each plat module dist/refresh.cjs takes from a plain bundle must be one refresh-bundle.ts hands over.
const handedToRefresh = await readFile(new URL(`../../${REFRESH_LOADER}`, import.meta.url), 'utf8');
const notHanded = [...refreshPlainModules].filter((key) => !handedToRefresh.includes(`'${key}': `));
if (notHanded.length > 0) throw new Error(`dist/${REFRESH_BUNDLE}.cjs imports ${notHanded.join(', ')}: add them to plainModules() in ${REFRESH_LOADER}`);

const mcpMainModules = new Set();
await build({
  entryPoints: ['src/mcp/server.ts'],
  outfile: `dist/${MCP_BUNDLE}`,
  plugins: [modulesFromMain(mcpMainModules), mcpWithoutAjv()],
  ...common,
});
// Each plat module dist/mcp.cjs takes from dist/main.cjs must be one mcp/load.ts hands over.
const handedOver = await readFile(new URL('../mcp/load.ts', import.meta.url), 'utf8');
const missing = [...mcpMainModules].filter((key) => !handedOver.includes(`'${key}': `));
if (missing.length > 0) throw new Error(`dist/${MCP_BUNDLE} imports ${missing.join(', ')}: add them to mainModules() in src/mcp/load.ts`);

// The Node library (`import { createClient } from '<package>'`): a second entry, ES modules, with the package's
// dependencies left as imports (npm installs them beside it) and a `require` for the few built-ins the session
// layer loads on demand (node:https). Code splitting keeps our `await import()`s lazy: in one ES module file esbuild
// would hoist their imports (oauth4webapi, undici) to the top and load them with the library. Its types are the
// hand-written src/library/public.d.ts.
await build({
  entryPoints: { index: 'src/library/index.ts' },
  outdir: 'dist/library',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  packages: 'external',
  define: { PLAT_VERSION: JSON.stringify(pkg.version) },
  banner: { js: "import { createRequire as __platCreateRequire } from 'node:module'; const require = __platCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
await copyFile(new URL('../library/public.d.ts', import.meta.url), new URL('../../dist/library/index.d.ts', import.meta.url));

// The JSON Schemas of the `--json` outputs, for script authors (`<package>/schemas/login.json`); test/ui/json.test.ts
// checks every command's output against them.
await cp(new URL('../schemas', import.meta.url), new URL('../../dist/schemas', import.meta.url), { recursive: true });

// The help topics' text, read by `plat help <topic>` alone (src/commands/help.ts) from beside the bundle: kept out of
// dist/main.cjs, which every other start reads and compiles. The man page is built from the same files (man.mjs).
await cp(new URL('../help/topics', import.meta.url), new URL('../../dist/help', import.meta.url), { recursive: true });


/**
 * bin/plat.js reads a bundle as latin1, which is a plain copy into a one-byte string where utf8 must be decoded
 * (~1 ms per start for 580 KB). esbuild already escapes non-ASCII in strings; what it keeps verbatim (a comment's
 * "§") is escaped too, so both readings give the same text. test/cli/startup.test.ts checks the bundle is ASCII.
 */
async function asciiOnly(outfile) {
  const bundle = await readFile(new URL(`../../${outfile}`, import.meta.url), 'utf8');
  if (/[^\x00-\x7f]/.test(bundle)) {
    const ascii = bundle.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    await writeFile(new URL(`../../${outfile}`, import.meta.url), ascii);
  }
}

/** A module's key: its path from the repository's root, as a .ts file. */
function moduleKey(importer, specifier) {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return path.relative(root, path.resolve(path.dirname(importer), specifier)).split(path.sep).join('/').replace(/\.js$/, '.ts');
}

/**
 * In a plain bundle, each import of a module dist/refresh.cjs holds (REFRESH_ENTRIES) reads it from there: the
 * module stands for `refreshModule(key)` (refresh-bundle.ts), which loads that bundle the first time it is asked,
 * as esbuild initialises the importer: on the `await import()` that reaches it.
 */
function modulesFromRefreshBundle() {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return {
    name: 'modules-from-refresh-bundle',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.namespace !== 'file') return undefined;
        const key = moduleKey(args.importer, args.path);
        return REFRESH_ENTRIES.includes(key) ? { path: key, namespace: 'plat-refresh' } : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: 'plat-refresh' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(`./${REFRESH_LOADER}`)}).refreshModule(${JSON.stringify(args.path)});`,
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/**
 * dist/refresh.cjs holds the modules the plain bundles do not (oauth4webapi and the protocol, the lock, DPoP); every
 * plat module a plain bundle holds is that bundle's copy, handed over by refresh-bundle.ts in
 * globalThis.__platPlain. `keys` collects which.
 */
function modulesFromPlain(plain, keys) {
  return {
    name: 'modules-from-plain',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.namespace !== 'file' || !args.importer.includes(path.sep)) return undefined;
        const key = moduleKey(args.importer, args.path);
        if (!plain.has(key)) return undefined;
        keys.add(key);
        return { path: key, namespace: 'plat-plain' };
      });
      b.onLoad({ filter: /.*/, namespace: 'plat-plain' }, (args) => ({
        contents: `module.exports = globalThis.__platPlain[${JSON.stringify(args.path)}];`,
        loader: 'js',
      }));
    },
  };
}

/**
 * commander requires node:child_process at load time, for executable subcommands plat does not use; loading it
 * costs every invocation ~3 ms (measured: median 2.5 ms of CPU for `require('node:child_process')` over bare Node,
 * 60 runs, Node 20.20). Defer it to first use. test/cli/startup.test.ts fails if a start loads it again.
 */
function lazyChildProcessInCommander() {
  return {
    name: 'lazy-child-process-in-commander',
    setup(b) {
      b.onLoad({ filter: /commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        const eager = "const childProcess = require('node:child_process');";
        if (!source.includes(eager)) throw new Error('commander changed: update lazyChildProcessInCommander in src/build/build.mjs');
        const lazy = "const childProcess = { get spawn() { return require('node:child_process').spawn; } };";
        return { contents: source.replace(eager, lazy), loader: 'js' };
      });
    },
  };
}

/**
 * plat decides colour itself (--no-color, NO_COLOR, FORCE_COLOR, TTY) and gives chalk an explicit level, so chalk's
 * own terminal detection (which loads node:tty on every start, ~1.3 ms of CPU measured the same way) is replaced by a
 * stub that detects nothing. test/cli/startup.test.ts fails if a start loads node:tty again.
 */
function chalkWithoutDetection() {
  return {
    name: 'chalk-without-detection',
    setup(b) {
      b.onResolve({ filter: /^#supports-color$/ }, () => ({ path: 'supports-color-stub', namespace: 'plat-stub' }));
      b.onLoad({ filter: /.*/, namespace: 'plat-stub' }, () => ({
        contents: 'export default { stdout: false, stderr: false };',
        loader: 'js',
      }));
    },
  };
}

/**
 * The MCP SDK's Server validates elicitation answers (server → client questions) with ajv and ajv-formats, and builds
 * that validator in its constructor. plat mcp asks no such question (mcp/sdk.ts hands the Server a validator that
 * refuses), so the SDK's ajv provider is replaced by a stub: ~250 KB less for plat mcp to read and compile, and no
 * Ajv instance built at start. test/cli/startup.test.ts fails if ajv comes back into dist/mcp.cjs.
 */
function mcpWithoutAjv() {
  return {
    name: 'mcp-without-ajv',
    setup(b) {
      b.onLoad({ filter: /@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]validation[\\/]ajv-provider\.js$/ }, () => ({
        contents: "export class AjvJsonSchemaValidator { getValidator() { throw new Error('plat mcp validates no elicitation: it asks for none'); } }",
        loader: 'js',
      }));
    },
  };
}

/**
 * dist/mcp.cjs holds plat mcp's own modules (src/mcp/ but load.ts) and the SDK; every other plat module it
 * imports is dist/main.cjs's copy, handed over by src/mcp/load.ts in globalThis.__platMain, so that no
 * module exists twice in one process (two PlatError classes, two registries of secrets). `keys` collects which.
 */
function modulesFromMain(keys) {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return {
    name: 'modules-from-main',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = path.relative(root, path.resolve(path.dirname(args.importer), args.path)).split(path.sep).join('/').replace(/\.js$/, '.ts');
        if (!target.startsWith('src/') || /^src\/mcp\/(?!load\.ts$)[a-z-]+\.ts$/.test(target)) return undefined;
        keys.add(target);
        return { path: target, namespace: 'plat-main' };
      });
      b.onLoad({ filter: /.*/, namespace: 'plat-main' }, (args) => ({
        contents: `module.exports = globalThis.__platMain[${JSON.stringify(args.path)}];`,
        loader: 'js',
      }));
    },
  };
}
