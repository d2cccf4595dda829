import type { CoverageMap } from 'istanbul-lib-coverage';

/** The coverage of src/ from the plat processes that wrote V8 coverage into `dir` (see v8-coverage.mjs). */
export function spawnedCoverage(dir: string, root: string): Promise<{ map: CoverageMap; processes: number }>;
