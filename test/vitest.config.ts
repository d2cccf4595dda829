import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SlowKindsFirst } from './helpers/sequencer.js';
import { timeScaleFor } from './helpers/time.js';

// One factor for every wall-clock bound of the run (test/helpers/time.ts), worked out once here and handed to the
// workers through the environment, so a worker that starts when the load has changed uses the same one.
const timeScale = timeScaleFor(process.env);
process.env.PLAT_TEST_TIME_SCALE = String(timeScale);

// Tests spawn the built CLI and run a real authorization server: give them room. Three files at a time on the two
// cores the suite is budgeted for: a file keeps about 70 % of a core busy (faults/kill.test.ts alone: 45 s of wall
// time, 32 s of CPU), the rest is waiting on a server, a deadline, a token's expiry, so two workers left 20–30 % of
// the CPU idle. Every wall-clock bound is scaled (helpers/time.ts), which keeps timing-sensitive flows (token
// expiry, locks) green when they share the cores with more.
export default defineConfig({
  // This file lives in test/; paths below are from the repository root.
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000 * timeScale,
    hookTimeout: 30_000 * timeScale,
    pool: 'forks',
    maxWorkers: 3,
    // Long files first, so that none starts late and runs alone at the end (helpers/sequencer.ts).
    sequence: { sequencer: SlowKindsFirst },
  },
});
