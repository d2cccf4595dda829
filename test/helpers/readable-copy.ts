/**
 * A copy of the built CLI that any user can read, for tests that run plat as another (unprivileged) user.
 *
 * A checkout often sits where other users cannot enter: root's clone in /root, a `mktemp -d` directory (0700). The
 * unprivileged user could then not even read bin/plat.js. So those runs use a copy under the system's /tmp: the
 * shim, the bundle, package.json, and the packages the bundle loads at run time (its esbuild externals) with
 * their dependencies, every directory 0755 and every file world-readable. Made once per test process, inside the
 * directory test/run.mjs removes after the run (PLAT_TEST_SHARED_DIR); without it (vitest run directly), in /tmp,
 * removed when the process exits normally.
 */
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What dist/main.cjs requires at run time instead of bundling (src/build/build.mjs `external`). */
const RUNTIME_PACKAGES = ['@github/keytar', 'ajv', 'jq-web', 'open', 'ora', 'undici'];

let copy: string | undefined;

/** bin/plat.js inside a world-readable copy of `repoRoot`'s built CLI. */
export function readablePlatBin(repoRoot: string): string {
  if (!copy) {
    const shared = process.env.PLAT_TEST_SHARED_DIR;
    const dir = mkdtempSync(path.join(shared ?? (process.platform === 'linux' ? '/tmp' : os.tmpdir()), 'plat readable '));
    if (!shared) process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    for (const part of ['package.json', 'bin', 'dist']) cpSync(path.join(repoRoot, part), path.join(dir, part), { recursive: true });
    for (const pkg of runtimePackages(repoRoot)) {
      cpSync(path.join(repoRoot, pkg), path.join(dir, pkg), { recursive: true, verbatimSymlinks: true });
    }
    openUp(dir);
    copy = dir;
  }
  return path.join(copy, 'bin', 'plat.js');
}

/** The node_modules directories (relative to the repository) of the runtime packages and everything they depend on. */
function runtimePackages(repoRoot: string): string[] {
  const found = new Set<string>();
  const visit = (name: string, from: string) => {
    // Node's lookup: the requiring package's own node_modules first, then the top level.
    const nested = path.join(from, 'node_modules', name);
    const dir = existsSync(path.join(repoRoot, nested)) ? nested : path.join('node_modules', name);
    if (found.has(dir) || [...found].some((f) => dir.startsWith(`${f}${path.sep}`))) return;
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, dir, 'package.json'), 'utf8'));
    found.add(dir);
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      if (existsSync(path.join(repoRoot, dir, 'node_modules', dep)) || existsSync(path.join(repoRoot, 'node_modules', dep))) visit(dep, dir);
    }
  };
  for (const name of RUNTIME_PACKAGES) visit(name, '.');
  return [...found];
}

/** Directories 0755, files readable by all (executable by all where the owner may execute them). */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) openUp(file);
    else if (entry.isFile()) chmodSync(file, statSync(file).mode & 0o100 ? 0o755 : 0o644);
  }
}
