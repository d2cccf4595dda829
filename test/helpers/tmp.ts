import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Fresh directories under the OS temp dir, removed by `cleanup()` (call it in afterEach/afterAll). */
export function tempDirs(prefix = 'plat-test-') {
  const made: string[] = [];
  return {
    async make(): Promise<string> {
      const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}
