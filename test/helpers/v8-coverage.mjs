/**
 * The coverage of src/ from plat processes run with NODE_V8_COVERAGE (test/coverage.mjs; held by
 * test/repo/coverage.test.ts): each process's raw V8 coverage of the bundles (dist/main.cjs, dist/plain-<command>.cjs,
 * dist/mcp.cjs) is merged per bundle (@bcoe/v8-coverage), then mapped back to src/ through the build's source maps
 * (v8-to-istanbul reads the `sourceMappingURL` the bundle ends with).
 */
import { mergeProcessCovs } from '@bcoe/v8-coverage';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import libCoverage from 'istanbul-lib-coverage';
import v8ToIstanbul from 'v8-to-istanbul';

const BUNDLES = ['main.cjs', 'plain-call.cjs', 'plain-token.cjs', 'plain-whoami.cjs', 'mcp.cjs'];

/** { map: istanbul coverage of src/ (absolute paths), processes: how many of the coverage files are a plat's }. */
export async function spawnedCoverage(dir, root) {
  const map = libCoverage.createCoverageMap({});
  let files = [];
  try {
    files = (await readdir(dir)).filter((name) => name.endsWith('.json'));
  } catch {
    return { map, processes: 0 };
  }
  const byBundle = new Map(BUNDLES.map((name) => [pathToFileURL(path.join(root, 'dist', name)).href, []]));
  // Other node processes a test starts with plat's environment (a browser stand-in, a program using the library)
  // write coverage there too: only those that ran a bundle count.
  let processes = 0;
  for (const name of files) {
    const { result } = JSON.parse(await readFile(path.join(dir, name), 'utf8'));
    let ranPlat = false;
    for (const script of result) {
      const runs = byBundle.get(script.url);
      if (!runs) continue;
      runs.push({ result: [script] });
      ranPlat = true;
    }
    if (ranPlat) processes++;
  }
  for (const [url, runs] of byBundle) {
    if (runs.length === 0) continue;
    const [merged] = mergeProcessCovs(runs).result;
    // The bundle on disk is the whole text V8 compiled (bin/plat.js wraps nothing): no wrapper to skip.
    const converter = v8ToIstanbul(fileURLToPath(url), 0);
    await converter.load();
    converter.applyCoverage(merged.functions);
    for (const [file, data] of Object.entries(converter.toIstanbul())) {
      if (path.relative(root, file).startsWith(`src${path.sep}`)) map.merge({ [file]: data });
    }
  }
  return { map, processes };
}
