// plat batch's check pass as part of the run, and its output on a terminal, through the built CLI: Ctrl-C during
// the check ends it at once with nothing sent, raw lines the API description does not list are reported line by
// line (--strict refuses them), results on a terminal are escaped as plat call's are, and the progress line is
// cleared before a result line reaches the same terminal (its total leaving out the lines a journal skips).
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ndjson } from '../helpers/batch.js';
import { expectCleanError, platBin } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform();
const home = useHome();

async function loggedIn() {
  const result = await home.login(platform, ['--scope', 'courses:read courses:write']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

const apiRequests = () => platform.stats.events.filter((e) => e.path.startsWith('/api/') && !e.path.startsWith('/api/oauth/'));
const env = () => definedEnv(home.env) as NodeJS.ProcessEnv;

/** plat batch under `script`: stdout and stderr on one terminal, as a person sees them. */
function onTerminal(args: string[]): Promise<string> {
  const command = [process.execPath, platBin, ...args].map((a) => JSON.stringify(a)).join(' ');
  return new Promise<string>((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('close', () => resolve(out));
  });
}

describe('plat batch: the check pass', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while op lines are checked ends the run within a second: exit %i, nothing sent', async (signal, exit) => {
    await loggedIn();
    const file = path.join(home.dir, 'many.ndjson');
    await writeFile(file, `${JSON.stringify({ op: 'createCourse', body: { title: 'Algebra', seats: 30 } })}\n`.repeat(20_000));
    const child = spawn(process.execPath, [platBin, 'batch', file], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let interruptedAt = 0;
    // The moment the API description has gone out, the check pass is under way: interrupt it then.
    platform.override('/openapi.json', async (_req, res) => {
      res.once('finish', () =>
        setImmediate(() => {
          interruptedAt = Date.now();
          child.kill(signal);
        }),
      );
      return false;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const afterMs = Date.now() - interruptedAt;
    expect(interruptedAt, 'the description was fetched').toBeGreaterThan(0);
    expect(code, stderr).toBe(exit);
    // Well under the 3 s after which plat ends a flow that missed the signal.
    expect(afterMs, `from ${signal} to exit`).toBeLessThan(scaled(1000, { under: 2900 }));
    expect(stderr).toMatch(/Interrupted\./);
    expect(apiRequests()).toEqual([]);
  });

  it('raw lines whose path or method the API description does not list are reported line by line; --strict refuses them', async () => {
    await loggedIn();
    const file = path.join(home.dir, 'raw.ndjson');
    await writeFile(
      file,
      ndjson([
        { method: 'GET', path: '/api/courses' },
        { method: 'POST', path: '/api/cupons', body: { code: 'X' } },
        { method: 'DELETE', path: '/api/courses' },
        { method: 'GET', path: '/api/courses/course-101' },
      ]),
    );
    const check = await home.run(['batch', file, '--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toMatch(/2 lines name what the platform's API description does not list/);
    expect(check.stderr).toContain("line 2: POST /api/cupons: the path is not in the platform's API description");
    expect(check.stderr).toMatch(/line 3: DELETE \/api\/courses: the platform's API description has no DELETE \/api\/courses \(it has GET, POST\)/);
    expect(check.stderr).not.toMatch(/line [14]:/);
    const strict = await home.run(['batch', file, '--check', '--strict']);
    expect(strict.code).toBe(2);
    expectCleanError(strict);
    expect(strict.stderr).toMatch(/2 lines are not a request plat batch can send; nothing was sent/);
    const run = await home.run(['batch', file, '--strict']);
    expect(run.code).toBe(2);
    expect(apiRequests()).toEqual([]);
  });
});

describe('plat batch on a terminal', () => {
  it('the progress line shows while the lines are checked, before anything is sent', async () => {
    await loggedIn();
    const file = path.join(home.dir, 'many.ndjson');
    await writeFile(file, `${JSON.stringify({ op: 'createCourse', body: { title: 'Algebra', seats: 30 } })}\n`.repeat(100_000));
    const terminal = await onTerminal(['batch', file, '--check']);
    expect(terminal).toMatch(/checking: \d+ lines read/);
    expect(terminal).toMatch(/100000 requests checked/);
  });


  it('results are escaped as plat call escapes them: no C1 or bidi control reaches the terminal raw', async () => {
    await loggedIn();
    const file = path.join(home.dir, 'echo.ndjson');
    await writeFile(file, ndjson([{ method: 'POST', path: '/api/echo', body: { note: 'a\u009b31mred\u202eevil\u2066' } }]));
    const terminal = await onTerminal(['batch', file]);
    expect(terminal).toMatch(/1 succeeded/);
    expect(terminal).not.toMatch(/[\u009b\u202e\u2066]/);
    expect(terminal).toContain('a\\u009b31mred\\u202eevil\\u2066');
  });

  it('the progress line is cleared before each result line, and its total leaves out the lines a journal skips', async () => {
    await loggedIn();
    const file = path.join(home.dir, 'slow.ndjson');
    const journal = path.join(home.dir, 'slow.journal');
    const line = (i: number) => ({ id: `c${i}`, method: 'GET', path: '/api/status/200', query: { n: i } });
    await writeFile(file, ndjson(Array.from({ length: 10 }, (_, i) => line(i))));
    expect((await home.run(['batch', file, '--journal', journal])).code).toBe(0);
    await writeFile(file, ndjson(Array.from({ length: 20 }, (_, i) => line(i))));
    platform.knobs.apiLatencyMs = 150;
    const terminal = await onTerminal(['batch', file, '--journal', journal, '--concurrency', '1']);
    expect(terminal).toMatch(/\d+\/10 done · 0 failed/);
    expect(terminal).not.toMatch(/\/20 done/);
    // Every result line starts at the margin: after a line end, or after the progress line was wiped.
    const pieces = terminal.split(/\r|\n/).filter((piece) => piece.includes('{"id"'));
    expect(pieces).toHaveLength(10);
    for (const piece of pieces) expect(piece.replace(/^\x1b\[2K/, '')).toMatch(/^\{"id"/);
    expect(terminal).toMatch(/20 lines: 10 succeeded, 0 failed, 10 skipped/);
  });
});
