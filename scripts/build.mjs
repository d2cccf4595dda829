// Bundles src/ into dist/: one small entry chunk for start-up, and a chunk per lazily imported command or library
// (undici, oauth4webapi, ora, ...) that only the commands needing them load.
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
await rm(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  legalComments: 'none',
  chunkNames: 'chunks/[name]-[hash]',
  // keytar is a native addon; `open` finds its bundled xdg-open next to its own files.
  external: ['@github/keytar', 'open'],
  define: { PLAT_VERSION: JSON.stringify(pkg.version) },
  // Bundled CommonJS (proper-lockfile, undici internals) may call require(): give ESM output one.
  banner: { js: "import { createRequire as __plat_createRequire } from 'node:module'; const require = __plat_createRequire(import.meta.url);" },
  logLevel: 'warning',
});
