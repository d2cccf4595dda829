/**
 * What a hostile server can still do with plat's newest surfaces (issue 23): `--paginate`, `--jq`, `--retry`,
 * token lifetimes, a terminal. The reference platform is the first origin, the hostile server (which logs every
 * header it receives) the second; each case checks what the other origin saw, that the command ends (Ctrl-C within
 * a second), peak RSS under its bound, or the bytes that reached the terminal.
 */
import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { expectFailure } from './helpers.js';
import { startHostile, type Hostile } from './hostile.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform();
const home = useHome(() => ({ PLAT_BASE_URL: platform.baseUrl }));
let hostile: Hostile;

beforeAll(async () => {
  // Megabyte cursors travel in the request line: more than Node's default 16 KiB of head.
  hostile = await startHostile({ maxHeaderSize: 4 * 1024 * 1024 });
});
afterAll(async () => {
  await hostile.close();
});
beforeEach(() => {
  hostile.reset();
});

const MiB = 1024 * 1024;

function json(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
  return true;
}

describe('headers the user gave stay with their origin', () => {
  // The first origin is not the platform here: toward the platform, Authorization and Cookie are never taken from
  // -H (the header rule), so a list elsewhere is where a person's own credentials go.
  it('--paginate -H: a next page on another origin gets none that may carry a credential, and stderr names them', async () => {
    const seenFirst: Array<Record<string, unknown>> = [];
    hostile.on('/api/hostile-list', (req, res) => {
      seenFirst.push({ ...req.headers });
      return json(res, 200, JSON.stringify({ items: [1], next: `${platform.baseUrl}/api/page-2` }));
    });
    const seenSecond: Array<Record<string, unknown>> = [];
    platform.override('/api/page-2', (req, res) => {
      seenSecond.push({ ...req.headers });
      return json(res, 200, JSON.stringify({ items: [2], next: null }));
    });
    const result = await home.run([
      'call', 'GET', `${hostile.baseUrl}/api/hostile-list`, '--paginate',
      '-H', 'X-Api-Key: key-secret', '-H', 'Cookie: session=cookie-secret', '-H', 'Authorization: Bearer user-secret',
      '-H', 'Accept-Language: fr',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([1, 2]);
    // The first origin got what the user gave it ...
    expect(seenFirst[0]).toMatchObject({ 'x-api-key': 'key-secret', cookie: 'session=cookie-secret', authorization: 'Bearer user-secret' });
    // ... the other origin none of it, and only what describes the request.
    expect(seenSecond).toHaveLength(1);
    expect(JSON.stringify(seenSecond)).not.toMatch(/key-secret|cookie-secret|user-secret/);
    expect(seenSecond[0]!['accept-language']).toBe('fr');
    expect(result.stderr).toContain(
      `Page 2 is on ${platform.baseUrl}, not ${hostile.baseUrl}: not sending x-api-key, cookie, authorization there (given for ${hostile.baseUrl}).`,
    );
  });

  it('the signed-in session: neither the token nor the user’s headers reach the other origin', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    platform.override('/api/hostile-list', (_req, res) => json(res, 200, JSON.stringify({ items: [1], next: `${hostile.baseUrl}/api/page-2` })));
    hostile.on('/api/page-2', (_req, res) => json(res, 200, JSON.stringify({ items: [2] })));
    const result = await home.run(['call', 'GET', '/api/hostile-list', '--paginate', '-H', 'X-Api-Key: key-secret']);
    expect(result.code, result.stderr).toBe(0);
    expect(hostile.leaks(['key-secret', ...platform.secrets()])).toEqual([]);
  });
});

describe('waits are inside --timeout, and Ctrl-C ends them', () => {
  it('Retry-After: 60 under --timeout 2: the server’s answer at the deadline, not a minute later', async () => {
    platform.override('/api/busy', (_req, res) => json(res, 503, '{"error":"busy"}', { 'retry-after': '60' }));
    const result = await home.run(['call', 'GET', '/api/busy', '--timeout', '2', '--retry', '3'], { measure: true, timeoutMs: scaled(15_000) });
    expect(result.ms).toBeLessThan(scaled(3_000, { under: 30_000 }));
    expectFailure(result, 1, /HTTP 503/, { stdout: true });
    expect(result.stderr).toContain("a retry in 60 s would end past the request's deadline (--timeout): not retrying");
  });

  it('Ctrl-C during a Retry-After wait ends the command within a second (exit 130)', async () => {
    platform.override('/api/busy', (_req, res) => json(res, 503, '{"error":"busy"}', { 'retry-after': '30' }));
    const result = await home.run(['call', 'GET', '/api/busy', '--retry', '3'], { interruptAfterMs: 1_000, timeoutMs: scaled(15_000) });
    expect(result.afterInterruptMs).toBeLessThan(scaled(1_000, { under: 3_000 }));
    expectFailure(result, 130, /Interrupted/, { stdout: true });
  });

  it('Retry-After: 0 with --retry 10: no listener piles up (no MaxListenersExceededWarning)', async () => {
    platform.override('/api/busy', (_req, res) => json(res, 503, '{"error":"busy"}', { 'retry-after': '0' }));
    const result = await home.run(['call', 'GET', '/api/busy', '--retry', '10']);
    expectFailure(result, 1, /HTTP 503/, { stdout: true });
    expect(result.stderr.match(/retrying in/g)).toHaveLength(10);
    expect(result.stderr).not.toMatch(/MaxListeners|Warning/);
  });
});

describe('memory stays bounded whatever the server sends', () => {
  // Measured on 2 cores: 128–150 MiB (where the garbage collector runs varies), and 284–295 MiB when the loop guard
  // keeps each URL instead of its digest. 150 MiB was the edge of the noise (a run at 150.05 failed); 200 MiB sits
  // midway, failing the regression by ~85 MiB.
  it('100 next cursors of 1 MiB each: the loop guard keeps digests (peak RSS under 200 MiB)', async () => {
    const pad = 'x'.repeat(MiB);
    hostile.on('/api/cursors', (req, res) => {
      const n = Number(/cursor=(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
      json(res, 200, JSON.stringify({ items: [n], next_cursor: n < 99 ? `${n + 1}${pad}` : null }));
    });
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/cursors`, '--paginate', '--ndjson'], { measure: true, timeoutMs: scaled(60_000) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(100);
    expect(result.peakKiB).toBeLessThan(200 * 1024);
  }, scaled(70_000));

  // Measured 137 MiB (70 MiB for a 2 MiB page): the page's bytes are held (twice while they are joined), nothing per
  // item. Parsed whole, the same page took about 800 MiB (1.6 GiB for 32 MiB, issue 23).
  it('one 16 MiB page of tiny items under --ndjson: streamed item by item (peak RSS under 180 MiB)', async () => {
    const item = '{"i":1}';
    const count = Math.floor((16 * MiB) / (item.length + 1));
    const page = `{"items":[${Array(count).fill(item).join(',')}],"next":null}`;
    hostile.on('/api/huge-page', (_req, res) => json(res, 200, page));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/huge-page`, '--paginate', '--ndjson'], {
      measure: true,
      discardStdout: true,
      timeoutMs: scaled(60_000),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdoutBytes).toBe(count * (item.length + 1));
    expect(result.peakKiB).toBeLessThan(180 * 1024);
  }, scaled(70_000));

  it('the same page as one JSON array (the default output) is streamed too, and stays valid JSON', async () => {
    const count = 100_000;
    const page = `[${Array.from({ length: count }, (_, i) => `{"i":${i},"s":"${'é'.repeat(3)}\\"]"}`).join(',')}]`;
    hostile.on('/api/array-page', (_req, res) => json(res, 200, page));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/array-page`, '--paginate']);
    expect(result.code, result.stderr).toBe(0);
    const items = JSON.parse(result.stdout) as Array<{ i: number; s: string }>;
    expect(items).toHaveLength(count);
    expect(items[count - 1]).toEqual({ i: count - 1, s: 'ééé"]' });
  });

  it('--jq on a 12 MiB body: refused in plat’s words once it passes 8 MiB, without growing toward jq’s abort', async () => {
    const body = `[${Array(Math.floor((12 * MiB) / 8)).fill('{"i":1}').join(',')}]`;
    hostile.on('/api/big', (_req, res) => json(res, 200, body));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/big`, '--jq', 'length'], { measure: true });
    expectFailure(result, 1, /larger than 8 MiB, more than --jq takes at once/);
    expect(result.peakKiB).toBeLessThan(150 * 1024);
  });

  it('jq busy on a server’s 7.5 MiB for many seconds: Ctrl-C still ends the command at once, not when jq is done (jq runs on a worker)', async () => {
    const body = `{"items":[${Array(Math.floor((7.5 * MiB) / 8)).fill('{"i":1}').join(',')}]}`;
    hostile.on('/api/slow-jq', (_req, res) => json(res, 200, body));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/slow-jq`, '--jq', '[.items[] | tostring | ascii_downcase] | sort | length'], {
      interruptAfterMs: 2_500,
      timeoutMs: scaled(30_000),
    });
    // jq on the main thread would end the command only when jq is done: 18 s of jq's work on an idle two-core
    // machine, 15 s after the Ctrl-C at least. The bound stays well under that however busy the machine (two
    // suites at once took 3.4 s here). A Ctrl-C that the wait did not notice ends the command at main.ts's 3 s
    // fallback, silently: "Interrupted." below is what tells that apart.
    expect(result.afterInterruptMs, 'ended soon after Ctrl-C, not when jq was done').toBeLessThan(scaled(2_000, { under: 12_000 }));
    expectFailure(result, 130, /Interrupted/, { stdout: true });
  }, scaled(40_000));

  it('--paginate --jq over merged items past 8 MiB: refused by the page where it passes', async () => {
    const page = (n: number) => JSON.stringify({ items: Array(150_000).fill({ i: n }), next: n < 9 ? `/api/pages-${n + 1}` : null });
    hostile.on('/api/pages-', (req, res) => json(res, 200, page(Number(req.url!.slice('/api/pages-'.length)))));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/pages-1`, '--paginate', '--jq', 'length']);
    expectFailure(result, 1, /The merged items \(by page \d\) is larger than 8 MiB/);
  });

  it('--paginate --ndjson --jq on a large page: filtered in batches', async () => {
    const count = 600_000;
    hostile.on('/api/many', (_req, res) => json(res, 200, `[${Array(count).fill('{"i":1}').join(',')}]`));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/many`, '--paginate', '--ndjson', '--jq', '.i'], { discardStdout: true, timeoutMs: scaled(60_000) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdoutBytes).toBe(count * 2);
  }, scaled(70_000));
});

describe('a server’s numbers and shapes never crash a command', () => {
  it('an item nested 100,000 deep under --paginate: refused in plat’s words, not a stack overflow', async () => {
    const deep = `[${'['.repeat(100_000)}${']'.repeat(100_000)}]`;
    hostile.on('/api/deep', (_req, res) => json(res, 200, deep));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/deep`, '--paginate']);
    expectFailure(result, 1, /nests deeper than 1000 levels: plat does not read a list like that/);
    expect(result.stderr).not.toMatch(/Unexpected failure|call stack/);
  });

  it('expires_in of 10^13: login stores a year and says so; token --json and status work', async () => {
    platform.knobs.tokenResponse = 'huge-expires-in';
    const login = await home.login(platform, ['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain('The server said the access token lasts longer than a year; plat keeps it as expiring in a year');
    const token = await home.run(['token', '--json']);
    expect(token.code, token.stderr).toBe(0);
    const parsed = JSON.parse(token.stdout) as { expires_at: string; expires_in: number };
    expect(parsed.expires_in).toBeGreaterThan(364 * 24 * 3600);
    expect(parsed.expires_in).toBeLessThanOrEqual(365 * 24 * 3600);
    expect(Date.parse(parsed.expires_at)).toBeGreaterThan(Date.now());
    const status = await home.run(['status']);
    expect(status.code, status.stderr).toBe(0);
    expectCleanError(status);
  });
});

describe('the terminal', () => {
  /** Runs plat with stdout on a pseudo-terminal (util-linux script); returns what reached it. */
  async function onTerminal(args: string[]): Promise<{ code: number | null; out: string }> {
    const env = definedEnv(home.env) as NodeJS.ProcessEnv;
    const command = [process.execPath, 'bin/plat.js', ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', `${command} 2>/dev/null`, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, out };
  }

  it('a JSON body past 8 MiB without Content-Length is not buffered to be pretty-printed: it goes out as it came', async () => {
    const body = `{"items":[${Array(Math.floor((9 * MiB) / 8)).fill('{"i":1}').join(',')}]}`;
    hostile.on('/api/unannounced', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no Content-Length
      res.end(body);
    });
    const { code, out } = await onTerminal(['call', 'GET', `${hostile.baseUrl}/api/unannounced`]);
    expect(code).toBe(0);
    // Compact as sent (a pretty print would have indented every item); the terminal turns \n into \r\n.
    expect(out.replace(/\r\n/g, '\n').trimEnd()).toBe(body);
  }, scaled(30_000));

  it('JSON that plat pretty-prints or pages on a terminal shows a server’s C1 and bidirectional controls as \\u escapes', async () => {
    hostile.on('/api/controls', (_req, res) => json(res, 200, JSON.stringify([{ t: 'a\u009b31mb\u202ec\u2028d' }])));
    for (const args of [[], ['--paginate'], ['--paginate', '--ndjson']]) {
      const { code, out } = await onTerminal(['call', 'GET', `${hostile.baseUrl}/api/controls`, ...args]);
      expect(code).toBe(0);
      expect(out).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2028]/);
      expect(out).toContain('a\\u009b31mb\\u202ec\\u2028d');
    }
  });

  it('a small JSON body without Content-Length is still pretty on a terminal', async () => {
    hostile.on('/api/small', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"a":[1]}');
    });
    const { code, out } = await onTerminal(['call', 'GET', `${hostile.baseUrl}/api/small`]);
    expect(code).toBe(0);
    expect(out.replace(/\r\n/g, '\n')).toContain('{\n  "a": [\n    1\n  ]\n}');
  });
});
