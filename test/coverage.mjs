#!/usr/bin/env node
/**
 * `npm run coverage [-- test files]`: the suite (or the named files) with coverage measured two ways, mapped to src/.
 *
 * - In-process: vitest's V8 coverage (@vitest/coverage-v8) of the src/ modules the tests import.
 * - Spawned: every plat the tests start runs with NODE_V8_COVERAGE (test/helpers/cli.ts puts it in runPlat's and
 *   each test home's environment, so a plat started on a pseudo-terminal or through sh is measured too); its bundles
 *   (dist/main.cjs, dist/plain-<command>.cjs, dist/mcp.cjs) are mapped back to src/ through the build's source maps
 *   (v8-to-istanbul), after merging the processes' raw V8 coverage per bundle (@bcoe/v8-coverage).
 *
 * Printed: line coverage per folder of src/ (in-process, spawned, and either), then every branch arm no test
 * reaches in src/session, src/oauth and src/store. A branch arm is the in-process (AST) one; it counts as reached
 * when a test took it in-process, or when a spawned plat ran its first line (V8 reports blocks, not AST arms, so an
 * arm that shares its line with one that ran is taken as reached: the list can miss such an arm, never invent one).
 * What no test reaches and why is in test/coverage/unreached.md. No gate on a number: the exit code is the suite's,
 * and a test that bounds a spawned plat's time or memory may fail here only (V8 coverage costs both).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import libCoverage from 'istanbul-lib-coverage';
import { spawnedCoverage } from './helpers/v8-coverage.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LISTED = ['src/session/', 'src/oauth/', 'src/store/'];

async function runSuite(dir, userArgs) {
  const args = [
    path.join(root, 'test', 'run.mjs'),
    '--coverage.enabled=true',
    '--coverage.provider=v8',
    '--coverage.include=src/**/*.ts',
    '--coverage.reporter=json',
    // A failing test still leaves coverage worth reading.
    '--coverage.reportOnFailure=true',
    `--coverage.reportsDirectory=${path.join(dir, 'in-process')}`,
    ...userArgs,
  ];
  const env = { ...process.env, PLAT_TEST_V8_COVERAGE: path.join(dir, 'spawned') };
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const rel = (file) => path.relative(root, file).split(path.sep).join('/');
const folderOf = (file) => {
  const parts = rel(file).split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : 'src/ (top level)';
};

function lineHits(map) {
  const lines = new Map();
  for (const file of map.files()) lines.set(rel(file), map.fileCoverageFor(file).getLineCoverage());
  return lines;
}

function percent(covered, total) {
  return total === 0 ? '   -  ' : `${((100 * covered) / total).toFixed(1).padStart(5)}%`;
}

async function main() {
  const userArgs = process.argv.slice(2);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-coverage-'));
  let code = 1;
  try {
    const started = Date.now();
    code = await runSuite(dir, userArgs);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    let inProcess;
    try {
      inProcess = libCoverage.createCoverageMap(JSON.parse(await readFile(path.join(dir, 'in-process', 'coverage-final.json'), 'utf8')));
    } catch {
      process.stderr.write('coverage.mjs: vitest wrote no coverage report\n');
      return;
    }
    const { map: spawned, processes } = await spawnedCoverage(path.join(dir, 'spawned'), root);
    const inLines = lineHits(inProcess);
    const spLines = lineHits(spawned);

    // Lines per folder: in-process, spawned, either.
    const folders = new Map();
    for (const file of inLines.keys()) {
      const a = inLines.get(file) ?? {};
      const b = spLines.get(file) ?? {};
      const f = folders.get(folderOf(file)) ?? { total: 0, inProcess: 0, spawned: 0, either: 0 };
      // The lines with code are the in-process map's (it has every file, loaded or not, from the AST); the
      // spawned map counts comments and blank lines too.
      for (const line of Object.keys(a)) {
        f.total++;
        if (a[line] > 0) f.inProcess++;
        if (b[line] > 0) f.spawned++;
        if (a[line] > 0 || b[line] > 0) f.either++;
      }
      folders.set(folderOf(file), f);
    }
    const out = [];
    out.push('', `Coverage of src/ (lines): in-process, in ${processes} spawned plat processes, and by either (${seconds} s)`);
    out.push('folder'.padEnd(22) + 'lines  in-process  spawned   either');
    for (const [folder, f] of [...folders].sort(([x], [y]) => x.localeCompare(y))) {
      out.push(`${folder.padEnd(22)}${String(f.total).padStart(5)}  ${percent(f.inProcess, f.total).padStart(10)}  ${percent(f.spawned, f.total).padStart(7)}  ${percent(f.either, f.total).padStart(7)}`);
    }

    // Branch arms no test reaches, in the layers whose every branch needs a test or a reason.
    const unreached = [];
    for (const file of inProcess.files()) {
      const name = rel(file);
      if (!LISTED.some((prefix) => name.startsWith(prefix))) continue;
      const fc = inProcess.fileCoverageFor(file);
      const spawnedLines = spLines.get(name) ?? {};
      for (const [id, branch] of Object.entries(fc.branchMap)) {
        branch.locations.forEach((location, arm) => {
          if (fc.b[id][arm] > 0) return;
          const start = location?.start?.line !== undefined ? location.start : branch.loc.start;
          const line = start.line;
          if (spawnedLines[line] > 0) return;
          unreached.push(`${name}:${line}:${(start.column ?? 0) + 1}  ${branch.type} arm ${arm + 1} of ${branch.locations.length}`);
        });
      }
    }
    out.push('', `Branch arms no test reaches in ${LISTED.join(', ')}: ${unreached.length} (reasons: test/coverage/unreached.md)`);
    out.push(...unreached.map((line) => `  ${line}`));
    const text = `${out.join('\n')}\n`;
    process.stdout.write(text);
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    process.exitCode = code;
  }
}

main().catch((error) => {
  process.stderr.write(`coverage.mjs: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
});
