/**
 * The start-up tricks must keep working, or plat silently gets slower: the V8 code cache of bin/plat.js, commander
 * with node:child_process deferred (src/build/build.mjs), chalk without its terminal detection (node:tty). Each
 * would break without an error, so each is checked from outside, on the built CLI.
 */
import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPlat } from '../helpers/cli.js';
import { useHome } from '../helpers/platform.js';

const home = useHome();

describe('the V8 code cache of bin/plat.js', () => {
  it('is written by the first run and then used as is (V8 accepts it: a rejected cache would be rewritten)', async () => {
    const cacheDir = path.join(home.dir, 'code cache');
    const env = { XDG_CACHE_HOME: cacheDir };
    // No profiles yet, so status exits 4 (like gh auth status); what matters here is the cache it leaves.
    expect((await home.run(['status'], { env })).code).toBe(4);
    const files = await readdir(path.join(cacheDir, 'plat'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^v8-${process.version.replace(/\./g, '\\.')}-\\d+-\\d+-status\\.bin$`));
    const file = path.join(cacheDir, 'plat', files[0]!);
    const first = await stat(file);
    expect(first.size).toBeGreaterThan(10_000);

    for (let i = 0; i < 2; i++) expect((await home.run(['status'], { env })).code).toBe(4);
    const later = await stat(file);
    expect([later.ino, later.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    expect(await readdir(path.join(cacheDir, 'plat'))).toEqual(files);
    // Another command keeps a cache of its own: the functions it compiles are not status's.
    await home.run(['scopes'], { env });
    expect((await readdir(path.join(cacheDir, 'plat'))).sort()).toEqual([...files, files[0]!.replace('-status.bin', '-scopes.bin')].sort());
  });
});

describe('modules plat does not load at start-up', () => {
  it('neither node:child_process (commander\'s, deferred at bundle time) nor node:tty (chalk\'s detection, stubbed)', async () => {
    // Node's own record of the built-in modules a process loaded, printed as it exits.
    const probe = path.join(home.dir, 'probe.cjs');
    await writeFile(
      probe,
      "process.on('exit', () => require('node:fs').writeSync(2, `LOADED ${JSON.stringify(process.moduleLoadList)}\\n`));\n",
    );
    for (const args of [['status'], ['call', '--help']]) {
      const result = await runPlatWithProbe(probe, args);
      const loaded: string[] = JSON.parse(/LOADED (.*)/.exec(result.stderr)![1]!);
      expect(loaded).toContain('NativeModule vm'); // the probe sees the shim's own load
      expect(loaded.filter((m) => /^NativeModule (child_process|tty)$/.test(m)), `plat ${args.join(' ')}`).toEqual([]);
    }
  });

  function runPlatWithProbe(probe: string, args: string[]) {
    // NODE_OPTIONS carries the probe into the one process runPlat spawns (node bin/plat.js …).
    return runPlat(args, { env: { ...home.env, NODE_OPTIONS: `--require ${JSON.stringify(probe)}` } });
  }
});
