/**
 * Turns a small TypeScript entry (which may import src/ modules) into a script a plain `node` child process can
 * run: for tests that need several real processes (locks) or a clean process environment (no session bus).
 * Dependencies stay external and resolve from the project's node_modules through NODE_PATH.
 */
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Bundles `source` (TypeScript; import project files by absolute path or relative to the repo root, e.g.
 * `./src/store/lock.ts`) to `<outDir>/<name>.cjs`. Top-level await is not available: wrap the body in a function.
 */
export async function bundleScript(source: string, outDir: string, name: string): Promise<string> {
  const outfile = path.join(outDir, `${name}.cjs`);
  await build({
    stdin: { contents: source, resolveDir: repoRoot, loader: 'ts', sourcefile: `${name}.ts` },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    // import() of a package would go through the ESM resolver, which ignores NODE_PATH: make it a require().
    supported: { 'dynamic-import': false },
    logLevel: 'silent',
  });
  return outfile;
}

/** The environment a bundled script needs to find the project's dependencies. */
export function nodeEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NODE_PATH: path.join(repoRoot, 'node_modules'), ...extra };
}
