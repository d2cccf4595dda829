// plat call --paginate and --jq through the built CLI against the reference platform's list endpoints
// (test/platform/lists.mjs): every detection rule, every output shape, every failure path.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanError, platBin, type Home, type PlatResult } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform();
const home = useHome(() => ({ PLAT_BASE_URL: platform.baseUrl }));

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `course-${String(from + i).padStart(4, '0')}`);
const call = (args: string[], options?: Parameters<Home['run']>[1]) => home.run(['call', 'GET', ...args], options);
const parse = (result: PlatResult) => JSON.parse(result.stdout) as Array<{ id: string }>;

/** Runs a command line with stdout on a pseudo-terminal (util-linux script), as a person at a terminal would. */
async function runInTerminal(command: string): Promise<string> {
  const env = definedEnv(home.env) as NodeJS.ProcessEnv;
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, out).toBe(0);
  return out;
}

async function loggedIn() {
  const result = await home.login(platform, ['--scope', 'courses:read']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

describe('--paginate detects the pagination style', () => {
  it.each([
    ['link', 'a top-level array with an RFC 8288 Link rel="next" header'],
    ['cursor', 'meta.next_cursor sent back as ?cursor='],
    ['next', 'an absolute next URL (next)'],
    ['links', 'a relative links.next URL'],
    ['pages', 'page and total_pages'],
    ['odata', '@odata.nextLink'],
  ])('%s: %s — one JSON array of every item, in order', async (style) => {
    const result = await call([`/api/lists/${style}`, '--paginate']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result).map((c) => c.id)).toEqual(ids(1, 95));
    expect(platform.lists.served[style]).toBe(10);
  });

  it('a top-level array without a Link header is one page', async () => {
    const result = await call(['/api/lists/array', '--paginate']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result)).toHaveLength(95);
    expect(platform.lists.served.array).toBe(1);
  });

  it('an object with one array and no next member is one page', async () => {
    const result = await call(['/api/courses', '--paginate']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result).map((c) => c.id)).toEqual(['course-101', 'course-102']);
  });

  it('keeps the query of the first request (-f) on every page', async () => {
    const result = await call(['/api/lists/cursor', '--paginate', '-f', 'per_page=7', '-F', 'total=30']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result).map((c) => c.id)).toEqual(ids(1, 30));
    expect(platform.lists.served.cursor).toBe(5);
  });

  it('an empty list prints []', async () => {
    const result = await call(['/api/lists/link', '--paginate', '-F', 'total=0']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('[]\n');
  });

  it('several arrays and no known name: exit 2 asking for --items; --items names them', async () => {
    const refused = await call(['/api/lists/ambiguous', '--paginate']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/several arrays \(\.courses, \.teachers\): name the items with --items <path>/);
    expect(refused.stdout).toBe('');
    expectCleanError(refused);

    const named = await call(['/api/lists/ambiguous', '--paginate', '--items', 'courses']);
    expect(named.code, named.stderr).toBe(0);
    expect(parse(named).map((c) => c.id)).toEqual(ids(1, 95));
  });

  it('items and next in places detection does not look: --items and --next path=param', async () => {
    const refused = await call(['/api/lists/custom', '--paginate']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/no array of items at its top level: name it with --items <path>/);

    const named = await call(['/api/lists/custom', '--paginate', '--items', 'result.rows', '--next', 'paging.after=after']);
    expect(named.code, named.stderr).toBe(0);
    expect(parse(named).map((c) => c.id)).toEqual(ids(1, 95));
    expect(platform.lists.served.custom).toBe(1 + 10);
  });

  it('--next with a bracketed member name: ["@odata.nextLink"]', async () => {
    const result = await call(['/api/lists/odata', '--paginate', '--items', 'value', '--next', '["@odata.nextLink"]']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result)).toHaveLength(95);
  });
});

describe('--paginate output shapes and limits', () => {
  it('--ndjson: one compact item per line', async () => {
    const result = await call(['/api/lists/link', '--paginate', '--ndjson']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(95);
    expect(lines.map((l) => JSON.parse(l).id)).toEqual(ids(1, 95));
    expect(lines[0]).toBe('{"id":"course-0001","n":1,"title":"Course 1","public":true}');
  });

  it('--slurp: an array of the whole page bodies', async () => {
    const result = await call(['/api/lists/pages', '--paginate', '--slurp']);
    expect(result.code, result.stderr).toBe(0);
    const pages = JSON.parse(result.stdout) as Array<{ page: number; total_pages: number; courses: unknown[] }>;
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(pages[9]).toMatchObject({ total_pages: 10, courses: expect.any(Array) });
    expect(pages[9]!.courses).toHaveLength(5);
  });

  it('--max-pages stops early, with a note that there is more', async () => {
    const result = await call(['/api/lists/next', '--paginate', '--max-pages', '3']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result).map((c) => c.id)).toEqual(ids(1, 30));
    expect(platform.lists.served.next).toBe(3);
    expect(result.stderr).toMatch(/Stopped at --max-pages: the list has more/);
  });

  it('--max-items cuts the last page short and fetches no further', async () => {
    const result = await call(['/api/lists/cursor', '--paginate', '--ndjson', '--max-items', '25']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(ids(1, 25));
    expect(platform.lists.served.cursor).toBe(3);
    expect(result.stderr).toMatch(/Stopped at --max-items/);
  });

  it('--max-items ending exactly at a page boundary still says the list has more, and fetches no further', async () => {
    const result = await call(['/api/lists/cursor', '--paginate', '--ndjson', '--max-items', '20']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(ids(1, 20));
    expect(platform.lists.served.cursor).toBe(2);
    expect(result.stderr).toMatch(/Stopped at --max-items: the list has more/);
  });

  it('--max-items equal to the whole list: everything, no note', async () => {
    const result = await call(['/api/lists/link', '--paginate', '--max-items', '95']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result)).toHaveLength(95);
    expect(result.stderr).not.toMatch(/Stopped/);
  });

  it('--max-items larger than the list: everything, no note', async () => {
    const result = await call(['/api/lists/link', '--paginate', '--max-items', '500']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result)).toHaveLength(95);
    expect(result.stderr).not.toMatch(/Stopped/);
  });

  it.each([
    [['--ndjson'], /--ndjson goes with --paginate/],
    [['--max-pages', '2'], /--max-pages goes with --paginate/],
    [['--paginate', '--ndjson', '--slurp'], /choose one/],
    [['--paginate', '--max-pages', '0'], /--max-pages must be a whole number/],
    [['--paginate', '-i'], /-i cannot be combined with --paginate/],
    [['--paginate', '--items', 'a..b'], /--items "a\.\.b" is not a path/],
  ])('usage errors: %j', async (flags, message) => {
    const result = await call(['/api/lists/link', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(platform.lists.served.link ?? 0).toBe(0);
    expectCleanError(result);
  });

  it('--paginate follows GET lists only', async () => {
    const result = await home.run(['call', 'POST', '/api/lists/link', '--paginate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--paginate follows GET lists \(got POST\)/);
  });
});

describe('--paginate memory', () => {
  /** Runs a paging plat, counting output lines as they stream by and polling its peak RSS (VmHWM) from /proc. */
  async function pageThrough(total: number) {
    const env = definedEnv(home.env) as NodeJS.ProcessEnv;
    const args = ['call', 'GET', `/api/lists/link?per_page=100&total=${total}`, '--paginate', '--ndjson'];
    const child = spawn(process.execPath, [platBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let tail = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const text = tail + chunk;
      const parts = text.split('\n');
      tail = parts.pop() ?? '';
      lines += parts.length;
      if (parts.length) last = parts[parts.length - 1]!;
    });
    let last = '';
    let peakKiB = 0;
    const poll = setInterval(async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
      const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
      if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
    }, 20);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(poll);
    return { code, lines, last, peakMiB: peakKiB / 1024 };
  }

  it('100,000 items over 1,000 pages stream through with flat memory (peak RSS ≤ 80 MiB, near that of 10 pages)', async () => {
    const small = await pageThrough(1000);
    const large = await pageThrough(100_000);
    expect(small.code).toBe(0);
    expect(large.code).toBe(0);
    expect(large.lines).toBe(100_000);
    expect(JSON.parse(large.last).id).toBe('course-100000');
    expect(platform.lists.served.link).toBe(10 + 1000);
    expect(large.peakMiB).toBeLessThanOrEqual(80);
    // Without the forced minor GCs of call-json.ts's output, 1,000 pages peak ~16 MiB above 10, and longer runs
    // keep climbing (40,000 pages of 25 items: 82 MiB); with them ~10 MiB above.
    expect(large.peakMiB - small.peakMiB).toBeLessThanOrEqual(20);
  }, scaled(60_000));
});

describe('--paginate failure paths', () => {
  it('a page that fails: exit 1, stderr names the page, and the array is left without its closing ]', async () => {
    platform.lists.fail = { page: 3, status: 500, times: 100 };
    const result = await call(['/api/lists/link', '--paginate']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Page 3: HTTP 500/);
    expect(result.stderr).toMatch(/stopped after 20 items and is incomplete: its closing \] was not printed/);
    expect(() => JSON.parse(result.stdout)).toThrow();
    expect(result.stdout.trimEnd().endsWith(']')).toBe(false);
    expect(result.stdout).toContain('"course-0020"');
    expectCleanError(result);
  });

  it('--ndjson: the items before the failure stay printed, and the exit code says it failed', async () => {
    platform.lists.fail = { page: 3, status: 500, times: 100 };
    const result = await call(['/api/lists/cursor', '--paginate', '--ndjson']);
    expect(result.code).toBe(1);
    expect(result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(ids(1, 20));
    expect(result.stderr).toMatch(/Page 3: HTTP 500.*incomplete/s);
  });

  it('a failure on the first page prints nothing on stdout', async () => {
    platform.lists.fail = { page: 1, status: 404, times: 100 };
    const result = await call(['/api/lists/link', '--paginate']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/HTTP 404/);
  });

  it('429 with Retry-After on page 4: waits, then goes on from page 4 (no start over)', async () => {
    platform.lists.fail = { page: 4, status: 429, times: 1, retryAfter: '1' };
    const started = Date.now();
    const result = await call(['/api/lists/link', '--paginate']);
    expect(result.code, result.stderr).toBe(0);
    expect(parse(result).map((c) => c.id)).toEqual(ids(1, 95));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    // 10 pages plus the one retried request: page 1 was not fetched again.
    expect(platform.lists.served.link).toBe(11);
    expect(platform.stats.events.filter((e) => e.path === '/api/lists/link').length).toBe(11);
  });

  it('a next link back to an earlier page stops with an error instead of looping', async () => {
    const result = await call(['/api/lists/loop', '--paginate']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Page 3's next link leads back to a page already fetched .*\/api\/lists\/loop\?skip=10.*stopping instead of looping/);
    expect(platform.lists.served.loop).toBe(3);
    expect(() => JSON.parse(result.stdout)).toThrow();
    expectCleanError(result);
  });

  it('a repeated cursor stops with an error too', async () => {
    // The server hands out the same cursor on every page.
    platform.override('/api/lists/stuck', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: 'x' }], meta: { next_cursor: 'same' } }));
      return true;
    });
    const result = await call(['/api/lists/stuck', '--paginate', '--ndjson']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Page 2's cursor leads back to a page already fetched/);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('a redirect is not followed: exit 1 naming where it points', async () => {
    const result = await call(['/api/redirect', '-f', 'to=/api/lists/link', '--paginate']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Page 1 \(GET \/api\/redirect\) answered HTTP 302 to \/api\/lists\/link: plat does not follow redirects/);
    expect(result.stdout).toBe('');
    expect(platform.lists.served.link ?? 0).toBe(0);
  });

  it('a page that says has_more but names no next page: exit 1 rather than a silently short list', async () => {
    platform.override('/api/lists/stripe', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'x1' }, { id: 'x2' }], has_more: true }));
      return true;
    });
    const refused = await call(['/api/lists/stripe', '--paginate']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/Page 1 says it has more \(has_more: true\) but names no next page.*--max-pages 1/);
    const taken = await call(['/api/lists/stripe', '--paginate', '--max-pages', '1']);
    expect(taken.code, taken.stderr).toBe(0);
    expect(parse(taken).map((c) => c.id)).toEqual(['x1', 'x2']);
    expect(taken.stderr).toMatch(/Stopped at --max-pages: the list has more/);
  });

  describe('a page whose body stops part-way', () => {
    /** A Link-header list, 10 items a page, whose page 3 sends the start of its body and then nothing. */
    function stallingList(): () => boolean {
      let stalled = false;
      platform.override('/api/stalling-list', (req, res) => {
        const page = Number(new URL(req.url ?? '/', platform.baseUrl).searchParams.get('page') ?? 1);
        const body = JSON.stringify(ids((page - 1) * 10 + 1, page * 10).map((id) => ({ id })));
        res.writeHead(200, { 'content-type': 'application/json', link: `</api/stalling-list?page=${page + 1}>; rel="next"` });
        if (page < 3) {
          res.end(body);
        } else {
          res.write(body.slice(0, 20));
          stalled = true;
        }
        return true;
      });
      return () => stalled;
    }

    it('--timeout ends it (the deadline covers each page\'s body): exit 3 naming the page, the items before it printed', async () => {
      stallingList();
      const started = Date.now();
      const result = await call(['/api/stalling-list', '--paginate', '--ndjson', '--timeout', '1']);
      expect(Date.now() - started).toBeLessThan(scaled(8_000));
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/page 3 of GET \/api\/stalling-list broke off before it was complete.* stopped after 20 items and is incomplete/);
      expect(result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(ids(1, 20));
      expectCleanError(result);
    });

    it('Ctrl-C ends it at once: exit 130, the items before it printed', async () => {
      const stalled = stallingList();
      const env = definedEnv(home.env) as NodeJS.ProcessEnv;
      const child = spawn(process.execPath, [platBin, 'call', 'GET', '/api/stalling-list', '--paginate', '--ndjson'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const done = new Promise<PlatResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
      for (let i = 0; i < 1500 && !(stalled() && stdout.split('\n').length > 20); i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 150)); // plat is waiting for the rest of page 3
      const sent = Date.now();
      child.kill('SIGINT');
      const result = await done;
      expect(Date.now() - sent, 'plat must end promptly after Ctrl-C').toBeLessThan(scaled(1_500, { under: 3_000 }));
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr).toMatch(/Interrupted\./);
      expect(result.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(ids(1, 20));
      expectCleanError(result);
    });
  });

  it('a page that is not JSON: exit 1, saying so', async () => {
    const result = await call(['/auth.md', '--paginate']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/page 1 of GET \/auth\.md is not JSON \(text\/markdown; charset=utf-8\)/);
    expect(result.stdout).toBe('');
  });
});

describe('--paginate and the session', () => {
  it('sends the token on every page of the platform', async () => {
    await loggedIn();
    const result = await call(['/api/lists/cursor', '--paginate', '--slurp']);
    expect(result.code, result.stderr).toBe(0);
    const pages = JSON.parse(result.stdout) as Array<{ viewer: string | null }>;
    expect(pages).toHaveLength(10);
    expect(pages.every((p) => p.viewer === 'user-ada')).toBe(true);
  });

  it('a token that expires part-way is refreshed, and every page is still served to the user', async () => {
    platform.knobs.accessTokenTtl = 3;
    await loggedIn();
    // 16 pages 250 ms apart: about 4 s, past the 3 s token (refreshed when half its lifetime is left).
    const started = Date.now();
    const result = await call(['/api/lists/cursor', '--paginate', '--slurp', '-F', 'per_page=6', '-F', 'delay_ms=250'], { timeoutMs: scaled(30_000) });
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    const pages = JSON.parse(result.stdout) as Array<{ viewer: string | null; data: unknown[] }>;
    expect(pages).toHaveLength(16);
    expect(pages.every((p) => p.viewer === 'user-ada')).toBe(true);
    const refreshes = platform.stats.count('token:refresh_token');
    expect(refreshes).toBeGreaterThanOrEqual(1);
    // One refresh each time a token reaches half its 3 s lifetime, never more (a slow machine stretches the run).
    expect(refreshes).toBeLessThanOrEqual(Math.ceil(elapsed / 1500) + 1);
    expect(platform.stats.count('refresh-replay')).toBe(0);
  });

  it('a token the server rejects part-way (401 invalid_token): refreshed once, the page replayed, the list completed', async () => {
    await loggedIn();
    const before = JSON.parse(await readFile(path.join(home.configDir, 'tokens', 'default.json'), 'utf8')) as { accessToken: string };
    platform.lists.fail = { page: 4, status: 401, times: 1 };
    const result = await call(['/api/lists/cursor', '--paginate', '--slurp']);
    expect(result.code, result.stderr).toBe(0);
    const pages = JSON.parse(result.stdout) as Array<{ viewer: string | null; data: Array<{ id: string }> }>;
    expect(pages.flatMap((p) => p.data.map((c) => c.id))).toEqual(ids(1, 95));
    expect(pages.every((p) => p.viewer === 'user-ada')).toBe(true);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    // Page 4 was answered 401 and asked again with the new token: 10 pages, 11 requests, no start over.
    expect(platform.lists.served.cursor).toBe(11);
    const after = JSON.parse(await readFile(path.join(home.configDir, 'tokens', 'default.json'), 'utf8')) as { accessToken: string };
    expect(after.accessToken).not.toBe(before.accessToken);
  });

  it('a token still rejected after the refresh: exit 4, the output marked incomplete', async () => {
    await loggedIn();
    platform.lists.fail = { page: 2, status: 401, times: 100 };
    const result = await call(['/api/lists/cursor', '--paginate']);
    expect(result.code).toBe(4);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect(result.stderr).toMatch(/Page 2: .*401.*incomplete/s);
    expect(() => JSON.parse(result.stdout)).toThrow();
    expectCleanError(result);
  });

  describe('a next link on another origin', () => {
    let other: Server;
    let otherOrigin: string;
    const seen: IncomingHttpHeaders[] = [];
    beforeAll(async () => {
      other = createServer((req, res) => {
        seen.push(req.headers);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ results: [{ id: 'elsewhere-1' }], next: null }));
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      // Another port is another origin.
      otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => other.close(resolve));
    });

    it('is followed without the token, with a note', async () => {
      await loggedIn();
      seen.length = 0;
      const result = await call(['/api/lists/elsewhere', '--paginate', '-f', `next_origin=${otherOrigin}`]);
      expect(result.code, result.stderr).toBe(0);
      expect(parse(result).map((c) => c.id)).toEqual([...ids(1, 20), 'elsewhere-1']);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.authorization).toBeUndefined();
      expect(result.stderr).toContain(`${otherOrigin} is not the platform's origin`);
      for (const secret of platform.secrets()) expect(result.stderr).not.toContain(secret);
    });
  });
});

describe('--jq', () => {
  it('filters one response; strings print raw', async () => {
    const result = await call(['/api/lists/pages', '--jq', '.courses[0:2][].title']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Course 1\nCourse 2\n');
  });

  it('other values print as compact JSON off a terminal', async () => {
    const result = await call(['/api/lists/pages', '--jq', '{page, n: (.courses | length)}']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"page":1,"n":10}\n');
  });

  it('with --paginate, filters the merged items', async () => {
    const result = await call(['/api/lists/link', '--paginate', '--jq', 'length, (map(select(.public)) | length), .[-1].id']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('95\n64\ncourse-0095\n');
  });

  it('with --paginate --ndjson, filters each item', async () => {
    const result = await call(['/api/lists/cursor', '--paginate', '--ndjson', '--jq', 'select(.n % 30 == 0) | {id}']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"id":"course-0030"}\n{"id":"course-0060"}\n{"id":"course-0090"}\n');
  });

  it('with --slurp, filters the array of pages', async () => {
    const result = await call(['/api/lists/pages', '--paginate', '--slurp', '--jq', 'map(.page) | add']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('55\n');
  });

  it.each([
    ['.courses | lengt', /--jq: lengt\/0 is not defined at column 12:\n {2}\.courses \| lengt\n {2} {11}\^/],
    ['.courses | ]', /--jq: syntax error, unexpected INVALID_CHARACTER at column 12:/],
    ['.courses | (1 +', /--jq: syntax error, unexpected end of the expression at column 16:/],
    ['.a |\n  .b | nope', /--jq: nope\/0 is not defined at line 2, column 8:\n {2} {2}\.b \| nope\n {2} {7}\^/],
  ])('a bad expression %j is a usage error with its position, before any request', async (expression, message) => {
    const result = await call(['/api/lists/pages', '--paginate', '--jq', expression]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect(platform.lists.served.pages ?? 0).toBe(0);
    expectCleanError(result);
  });

  it('an expression that fails on the data: exit 1 with jq\'s reason', async () => {
    const result = await call(['/api/lists/pages', '--jq', '.courses + 1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--jq failed on the response: array \(.*\) and number \(1\) cannot be added/);
    expectCleanError(result);
  });

  it('filters the response of any method', async () => {
    const result = await home.run(['call', 'POST', '/api/echo', '-f', 'title=Algebra', '--jq', '[.method, (.body | fromjson | .title)]']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('["POST","Algebra"]\n');
  });

  it('with --paginate and a page that fails: nothing on stdout (jq never saw a whole list), exit 1', async () => {
    platform.lists.fail = { page: 3, status: 500, times: 100 };
    const result = await call(['/api/lists/link', '--paginate', '--jq', 'length']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Page 3: HTTP 500/);
  });

  it.each([
    [['--jq', ' '], /--jq needs an expression/],
    [['--jq', '.', '-i'], /-i cannot be combined with --jq/],
  ])('usage errors: %j', async (flags, message) => {
    const result = await call(['/api/lists/pages', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(platform.lists.served.pages ?? 0).toBe(0);
  });

  it('on a terminal, JSON results are indented as jq does', async () => {
    const command = `'${process.execPath}' '${platBin}' call GET '/api/lists/pages?total=2' --jq '.courses | map({id})'`;
    const result = await runInTerminal(command);
    expect(result.replace(/\r/g, '')).toContain('[\n  {\n    "id": "course-0001"\n  },\n  {\n    "id": "course-0002"\n  }\n]\n');
  });

  it('on a terminal, --paginate indents each item inside the array', async () => {
    const result = await runInTerminal(`'${process.execPath}' '${platBin}' call GET '/api/lists/link?total=2' --paginate`);
    const out = result.replace(/\r/g, '');
    expect(out).toContain('[\n  {\n    "id": "course-0001",\n    "n": 1,');
    expect(out).toMatch(/ {4}"public": true\n {2}\}\n\]\n/);
  });

  it('an HTTP error response is printed as it came, unfiltered, with the contract\'s exit code', async () => {
    const result = await call(['/api/status/404', '--jq', '.status']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ status: 404 });
    expect(result.stderr).toMatch(/HTTP 404/);
  });

  it('a response that is not JSON: exit 1, saying so', async () => {
    const result = await call(['/auth.md', '--jq', '.']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is not JSON \(text\/markdown; charset=utf-8\): --jq needs JSON/);
  });
});
