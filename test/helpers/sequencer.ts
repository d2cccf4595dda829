/**
 * The order test files start in. vitest starts the files that took longest last time first, so that no long file
 * starts late and runs alone at the end; but a fresh clone (CI) has no record of last time, and vitest then starts
 * the largest files first, which puts a short file of long waits (interop/mcp-conformance.test.ts: 84 lines, 22
 * runs of the conformance suite, ~40 s) among the last and leaves one worker busy with it while the others are
 * done. Without a record, this starts the kinds whose files spawn plat and servers first (the slowest kinds on
 * average, test/README.md's table), the largest first within a kind, and the unit tests (milliseconds each) last,
 * where they fill the gaps.
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Slowest kind first: the average time of a file of each kind, in a CI run. */
const KIND_ORDER = ['faults', 'library', 'interop', 'cli', 'ui', 'in-process', 'repo', 'unit'];

function kindRank(root: string, file: string): number {
  const kind = path.relative(path.join(root, 'test'), file).split(path.sep)[0] ?? '';
  const rank = KIND_ORDER.indexOf(kind);
  return rank === -1 ? KIND_ORDER.length : rank;
}

export class SlowKindsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const key = (file: TestSpecification) => `${file.project.name}:${path.relative(this.ctx.config.root, file.moduleId)}`;
    // With every file's time from an earlier run (a developer's second run), vitest's own order is the better one.
    if (files.every((file) => this.ctx.cache.getFileTestResults(key(file)))) return super.sort(files);
    const size = (file: TestSpecification) => this.ctx.cache.getFileStats(key(file))?.size ?? 0;
    const root = this.ctx.config.root;
    return [...files].sort((a, b) => kindRank(root, a.moduleId) - kindRank(root, b.moduleId) || size(b) - size(a));
  }
}
