import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests spawn the built CLI and run a real authorization server: give them room, and keep parallelism to the
// machine's two cores so timing-sensitive flows (token expiry, locks) are not starved.
export default defineConfig({
  // This file lives in test/; paths below are from the repository root.
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
