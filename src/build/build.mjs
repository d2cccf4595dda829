// Bundles src/ into dist/main.cjs: one CommonJS file, because Node 20 loads one CommonJS file far faster than a
// graph of ES modules (its ESM loader costs ~20 ms of start-up per invocation). Modules that only some commands
// need are still initialised lazily: esbuild turns our `await import('./x.js')` into a deferred initialiser, so
// their code is parsed but not run. ESM-only packages used by few commands (ora, open) and the ones plat needs
// only in rare cases (undici: only behind a proxy; keytar: a native addon; ajv: plat op's body check, 280 KB the
// bundle would otherwise carry into every start) stay outside and are imported on use.
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
await rm(new URL('../../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/main.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  external: ['@github/keytar', 'ajv', 'open', 'ora', 'undici'],
  define: { PLAT_VERSION: JSON.stringify(pkg.version) },
  logLevel: 'warning',
  plugins: [lazyChildProcessInCommander(), chalkWithoutDetection()],
});


/**
 * commander requires node:child_process at load time, for executable subcommands plat does not use; loading it
 * costs every invocation ~3 ms. Defer it to first use.
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
 * own terminal detection (which loads node:tty on every start) is replaced by a stub that detects nothing.
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
