// Loads plat's program (src/cli.ts, from each command's definition) and the generators that read it (src/completion/*), for the
// scripts that write completions/ and dist/plat.1: bundled on the fly with esbuild, so they need no build first.
import { build } from 'esbuild';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const ENTRY = `
export { buildProgram } from './src/cli.ts';
export { describeProgram } from './src/completion/model.ts';
export { renderScript } from './src/completion/render.ts';
export { renderMan } from './src/completion/man.ts';
`;

/** { version, packageName, spec, renderScript, renderMan }: spec is the program as the completions and the man page see it. */
export async function loadProgram() {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-program-'));
  try {
    const outfile = path.join(dir, 'program.mjs');
    await build({
      stdin: { contents: ENTRY, resolveDir: root, loader: 'ts', sourcefile: 'program-entry.ts' },
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    });
    const mod = await import(pathToFileURL(outfile).href);
    const program = mod.buildProgram(pkg.version, () => {
      throw new Error('the program is only described here, never run');
    });
    return { version: pkg.version, packageName: pkg.name, spec: mod.describeProgram(program), renderScript: mod.renderScript, renderMan: mod.renderMan };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Writes generated files, or with CI set (or --check) only compares: CI must test what was committed, so a stale
 * file is reported here and failed by test/ui/generated.test.ts, never silently regenerated.
 * @param {Array<[string, string]>} files [path relative to the repo, content]
 */
export async function writeGenerated(files, { label }) {
  const isCI = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';
  const checkOnly = isCI || process.argv.includes('--check');
  const { mkdir, writeFile } = await import('node:fs/promises');
  const stale = [];
  for (const [file, content] of files) {
    const full = path.join(root, file);
    const current = await readFile(full, 'utf8').catch(() => undefined);
    if (current === content) continue;
    if (checkOnly) {
      stale.push(file);
      continue;
    }
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, content);
    process.stderr.write(`${label}: wrote ${file}\n`);
  }
  if (stale.length > 0) {
    process.stderr.write(`${label}: out of date: ${stale.join(', ')} (run npm run build and commit them)\n`);
    if (process.argv.includes('--check')) process.exitCode = 1;
  }
}
