/**
 * `npm run coverage` (test/coverage.mjs) maps the coverage of spawned plat processes back to src/ through the
 * bundles' source maps: held here on one real run, so a build change that breaks the mapping (no source map, a
 * wrapper that shifts offsets) fails the suite rather than the next coverage report.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { useHome } from '../helpers/platform.js';
import { tempDirs } from '../helpers/tmp.js';
import { spawnedCoverage } from '../helpers/v8-coverage.mjs';

const home = useHome();
const tmp = tempDirs('plat-coverage-test-');
afterEach(() => tmp.cleanup());

function hitLines(lines: Record<string, number>): number {
  return Object.values(lines).filter((count) => count > 0).length;
}

describe('coverage of spawned plat processes', () => {
  it('lands on the src/ lines that ran, and not on a command that did not', async () => {
    const coverage = await tmp.make();
    // A fresh code-cache dir: a process that compiles from a V8 code cache reports whole functions, not blocks.
    const result = await home.run(['status'], { env: { NODE_V8_COVERAGE: coverage, XDG_CACHE_HOME: await tmp.make() } });
    expect(result.code, result.stderr).toBe(4); // no profile logged in
    const { map, processes } = await spawnedCoverage(coverage, repoRoot);
    expect(processes).toBe(1);
    const file = (name: string) => map.fileCoverageFor(path.join(repoRoot, name));
    expect(map.files()).toContain(path.join(repoRoot, 'src/commands/auth/status.ts'));
    expect(hitLines(file('src/commands/auth/status.ts').getLineCoverage())).toBeGreaterThan(10);
    // login.ts is in the bundle but initialised only when `plat login` runs: its code unreached. (Lines without code,
    // such as an interface's, map to the bundle's top level and count as run: test/coverage.mjs counts only the lines
    // the in-process map says hold code.)
    const login = file('src/commands/auth/login.ts').getLineCoverage();
    const source = (await readFile(path.join(repoRoot, 'src/commands/auth/login.ts'), 'utf8')).split('\n');
    const codeLines = ['export async function run(', 'async function plannedScopes('].map((text) => source.findIndex((line) => line.startsWith(text)) + 2);
    expect(codeLines.every((line) => line > 1)).toBe(true);
    for (const line of codeLines) expect(login[line], `src/commands/auth/login.ts:${line}`).toBe(0);
    const status = file('src/commands/auth/status.ts').getLineCoverage();
    const statusRun = (await readFile(path.join(repoRoot, 'src/commands/auth/status.ts'), 'utf8')).split('\n').findIndex((line) => line.startsWith('export async function run(')) + 2;
    expect(status[statusRun], `src/commands/auth/status.ts:${statusRun}`).toBeGreaterThan(0);
    // Branches come through as blocks: status.ts took some and left others.
    const counts = Object.values(file('src/commands/auth/status.ts').b).flat();
    expect(counts.some((n) => n > 0)).toBe(true);
    expect(counts.some((n) => n === 0)).toBe(true);
  });
});
