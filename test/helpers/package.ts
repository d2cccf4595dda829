/**
 * The package as users get it: `npm pack` of the built tree (dist/ must be built, as for every spawned-CLI test),
 * unpacked into a throwaway project's node_modules. Its dependencies resolve from the repository's node_modules
 * through a symlinked node_modules one level up, so tests need no registry; the install test does the real
 * `npm i -g` of the tarball.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { repoRoot } from './cli.js';

const exec = promisify(execFile);

export interface PackedPackage {
  /** package.json's name. */
  name: string;
  version: string;
  tarball: string;
  /** The paths in the tarball, without the leading "package/", sorted. */
  files: string[];
  dir: string;
  cleanup(): Promise<void>;
}

export async function packPackage(): Promise<PackedPackage> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-pack-'));
  // --ignore-scripts: the tree is built already; `prepare` would rebuild dist/ under the other tests' feet.
  const { stdout } = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: repoRoot, env: npmEnv() });
  const [info] = JSON.parse(stdout) as Array<{ name: string; version: string; filename: string; files: Array<{ path: string }> }>;
  return {
    name: info!.name,
    version: info!.version,
    tarball: path.join(dir, info!.filename),
    files: info!.files.map((f) => f.path).sort(),
    dir,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * npm without the machine's user config noise, and with no update check or audit. npm may reach the registry, so
 * it gets back the host's NODE_EXTRA_CA_CERTS, which test/run.mjs keeps from the other processes (start-up cost).
 */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { PLAT_TEST_HOST_CA_CERTS: hostCa, ...env } = process.env;
  return {
    ...env,
    ...(hostCa ? { NODE_EXTRA_CA_CERTS: hostCa } : {}),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

export interface Project {
  dir: string;
  /** Writes `source` as an ES module in the project and returns its path. */
  script(name: string, source: string): Promise<string>;
}

/** A project with the packed package in node_modules/<name>, as `npm i <tarball>` would leave it. */
async function projectWith(pack: PackedPackage): Promise<Project> {
  const dir = path.join(pack.dir, 'project');
  const target = path.join(dir, 'node_modules', pack.name);
  await mkdir(target, { recursive: true });
  await exec('tar', ['-xzf', pack.tarball, '-C', target, '--strip-components=1']);
  await symlink(path.join(repoRoot, 'node_modules'), path.join(pack.dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  return {
    dir,
    script: async (name, source) => {
      const file = path.join(dir, name);
      await writeFile(file, source);
      return file;
    },
  };
}

export async function packageJson(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
}

/**
 * The packed package in a consumer project for the test file that calls it (in its top level): packed before its
 * tests, removed after. `project()` is the project, once beforeAll has made it.
 */
export function usePackedProject(): { project(): Project } {
  let pack: PackedPackage | undefined;
  let project: Project | undefined;
  beforeAll(async () => {
    pack = await packPackage();
    project = await projectWith(pack);
  });
  afterAll(async () => {
    await pack?.cleanup();
  });
  return {
    project: () => {
      if (!project) throw new Error('usePackedProject(): the project is made in beforeAll');
      return project;
    },
  };
}
