import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SlowKindsFirst } from './helpers/sequencer.js';
import { timeScaleFor } from './helpers/time.js';

// One factor for every wall-clock bound of the run (test/helpers/time.ts), worked out once here and handed to the
// workers through the environment, so a worker that starts when the load has changed uses the same one.
const timeScale = timeScaleFor(process.env);
process.env.PLAT_TEST_TIME_SCALE = String(timeScale);

// Tests spawn the built CLI and run a real authorization server: give them room, and keep parallelism to the
// machine's two cores so timing-sensitive flows (token expiry, locks) are not starved.
export default defineConfig({
  // This file lives in test/; paths below are from the repository root.
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000 * timeScale,
    hookTimeout: 30_000 * timeScale,
    pool: 'forks',
    maxWorkers: 2,
    // Long files first, so that none starts late and runs alone at the end (helpers/sequencer.ts).
    sequence: { sequencer: SlowKindsFirst },
  },
});
