/**
 * What a hostile API description can still do (issue 23), through the built CLI against the reference platform
 * serving each document of the corpus (hostile-descriptions.ts). The checks are the objective ones: the command
 * ends (and Ctrl-C would end it within a second), peak RSS and the cache file stay under their bounds, and no
 * byte a terminal acts on reaches stdout or stderr.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError, type PlatResult } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import {
  BACKTRACKING_VALUE,
  backtrackingPatterns,
  CATASTROPHIC_PATTERN,
  CROWDED_PATH,
  manyOperations,
  manyParametersInOneSegment,
  multiplyingReferences,
  scopeMaze,
  serveDescription,
  TERMINAL_CONTROLS,
  terminalControls,
  wideBody,
} from './hostile-descriptions.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome(() => ({ PLAT_BASE_URL: platform.baseUrl }));

/**
 * A run that a hang would turn into a failure: Ctrl-C (SIGINT) is sent after `interruptAfterMs`, and the command
 * must have ended by itself before it, or within a second of it. A synchronous loop ignores SIGINT; the run then
 * hits its time limit and the test fails.
 */
function expectNoHang(result: PlatResult): void {
  if (result.afterInterruptMs !== undefined) expect(result.afterInterruptMs, 'ended within a second of Ctrl-C').toBeLessThan(scaled(1_000, { under: 3_000 }));
  expectCleanError(result);
}

const interruptible = { interruptAfterMs: scaled(3_000), timeoutMs: scaled(10_000), measure: true };

describe('patterns from the description run on a linear-time engine', () => {
  it('a query parameter with ^(a+)+$: plat op refuses the value at once, exit 2 naming the parameter', async () => {
    serveDescription(platform, backtrackingPatterns());
    const result = await home.run(['op', 'findCourses', '--code', BACKTRACKING_VALUE], interruptible);
    expectNoHang(result);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`--code expects a string matching ${CATASTROPHIC_PATTERN}`);
    expect(result.ms).toBeLessThan(scaled(3_000));
    expect(platform.stats.count('GET /api/courses')).toBe(0);
  });

  it('a body field with ^(a+)+$, checked through ajv: refused at once, exit 2 naming the field', async () => {
    serveDescription(platform, backtrackingPatterns());
    const result = await home.run(['op', 'createCourse', '-f', `code=${BACKTRACKING_VALUE}`], interruptible);
    expectNoHang(result);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('code: must match pattern');
    expect(result.ms).toBeLessThan(scaled(3_000));
  });

  it('a value that matches the pattern is sent', async () => {
    serveDescription(platform, backtrackingPatterns());
    const result = await home.run(['op', 'findCourses', '--code', 'aaaa']);
    expect(result.code, result.stderr).toBe(0);
    expect(platform.stats.count('GET /api/courses')).toBe(1);
  });
});

describe('path templates are matched in linear time', () => {
  it('sixteen parameters in one segment, cached: plat call on a path that almost fits ends at once', async () => {
    serveDescription(platform, manyParametersInOneSegment());
    expect((await home.run(['op'])).code).toBe(0); // caches the description, which plat call then checks against
    const result = await home.run(['call', 'GET', CROWDED_PATH], interruptible);
    expectNoHang(result);
    expect(result.ms).toBeLessThan(scaled(3_000));
    expect(result.stderr).toContain(`${CROWDED_PATH} is not in the platform's API description`);
  });

  it('the same template still matches a path that fits', async () => {
    serveDescription(platform, manyParametersInOneSegment());
    expect((await home.run(['op'])).code).toBe(0);
    const result = await home.run(['call', 'GET', `${CROWDED_PATH}x`]);
    expect(result.stderr).not.toContain('is not in the platform');
  });
});

describe('references that multiply have one budget for the whole description', () => {
  it('10,000 operations naming a 2^30 tree: listed within seconds, peak RSS under 200 MiB, a cache under 8 MB', async () => {
    serveDescription(platform, multiplyingReferences(10_000));
    const result = await home.run(['op', 'm1', '--help'], { ...interruptible, interruptAfterMs: scaled(15_000), timeoutMs: scaled(30_000) });
    expectNoHang(result);
    expect(result.code, result.stderr).toBe(0);
    expect(result.ms).toBeLessThan(scaled(10_000));
    expect(result.peakKiB).toBeLessThan(200 * 1024);
    const cache = path.join(home.configDir, 'cache');
    const { readdir } = await import('node:fs/promises');
    let total = 0;
    for (const file of await readdir(cache)) total += (await stat(path.join(cache, file))).size;
    expect(total).toBeLessThan(8 * 1000 * 1000);
  }, scaled(40_000));
});

describe('a description’s size never blocks or crashes a command', () => {
  it('200,000 operations: the listing is printed (no "Maximum call stack size exceeded" from one call per row)', async () => {
    serveDescription(platform, manyOperations(200_000));
    const result = await home.run(['op'], { ...interruptible, interruptAfterMs: scaled(15_000), timeoutMs: scaled(30_000), discardStdout: true });
    expectNoHang(result);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('200000 operations');
  }, scaled(40_000));

  it('a body schema of 6,000 patterned properties is left to the server rather than compiled for seconds by ajv', async () => {
    serveDescription(platform, wideBody(6_000));
    const result = await home.run(['op', 'createWide', '-f', 'p1=z'], interruptible);
    expectNoHang(result);
    expect(result.ms).toBeLessThan(scaled(3_000));
    expect(platform.stats.count('POST /api/courses')).toBe(1);
  });
});

describe('the least set of scopes has a bound on its work', () => {
  it('plat scopes plan over 200 alternatives of 40 scopes per operation: an answer at once (77 s of search before)', async () => {
    serveDescription(platform, scopeMaze());
    const result = await home.run(['scopes', 'plan', 'maze0', 'maze1', 'maze2', 'maze3', '--json'], interruptible);
    expectNoHang(result);
    expect(result.code, result.stderr).toBe(0);
    expect(result.ms).toBeLessThan(scaled(3_000));
    expect((JSON.parse(result.stdout) as { scopes: string[] }).scopes).toHaveLength(160);
  });
});

describe('nothing from a description drives the terminal', () => {
  it('the listing: operationIds with right-to-left overrides and summaries with escapes are shown inert', async () => {
    serveDescription(platform, terminalControls());
    const result = await home.run(['op']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('list STEAL');
    expect(result.stdout).not.toMatch(TERMINAL_CONTROLS);
    expect(result.stderr).not.toMatch(TERMINAL_CONTROLS);
    const json = await home.run(['op', '--json']);
    expect(json.stdout).not.toMatch(TERMINAL_CONTROLS);
  });

  it('plat op <id> --help: a parameter type, enum and pattern, a field name, enum and pattern', async () => {
    serveDescription(platform, terminalControls());
    for (const id of ['list STEAL', 'createCourse']) {
      const result = await home.run(['op', id, '--help']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Usage: plat op');
      expect(result.stdout).not.toMatch(TERMINAL_CONTROLS);
      expect(result.stderr).not.toMatch(TERMINAL_CONTROLS);
    }
  });

  it('a refused value quotes the enum and the pattern inert', async () => {
    serveDescription(platform, terminalControls());
    for (const args of [['--state', 'x'], ['--code', 'A']]) {
      const result = await home.run(['op', 'list STEAL', ...args]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).not.toMatch(TERMINAL_CONTROLS);
    }
  });

  it('completion descriptions are inert too', async () => {
    serveDescription(platform, terminalControls());
    expect((await home.run(['op'])).code).toBe(0);
    const result = await home.run(['__complete', 'operations']);
    expect(result.stdout).not.toMatch(/[\u001b\u009b\u0007\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/);
  });
});
