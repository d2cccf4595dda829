/**
 * The Node library, imported from the packed package by a program in a child process (as a user's script runs
 * it), over the session a spawned `plat login` stored: the same session, lock, origin rule and errors as the CLI.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { usePackedProject } from '../helpers/package.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform();
const home = useHome();
const packed = usePackedProject();
let scripts = 0;

async function loggedIn(args: string[] = ['--scope', 'courses:read']) {
  const result = await home.login(platform, args);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `body` (an async function body that may `return` a value to print as JSON) in a program importing plat-cli. */
async function program(body: string, env: Record<string, string | undefined> = {}): Promise<Run> {
  const file = await packed.project().script(
    `program-${++scripts}.mjs`,
    `import * as plat from 'plat-cli';
const { createClient, AuthError, ScopeError, UsageError, PlatError } = plat;
const describe = (e) => ({ name: e?.name, message: e?.message, exitCode: e?.exitCode, isPlatError: e instanceof PlatError, isAuthError: e instanceof AuthError, isScopeError: e instanceof ScopeError, isUsageError: e instanceof UsageError });
try {
  const result = await (async () => { ${body} })();
  process.stdout.write(JSON.stringify({ result }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: describe(error) }));
}
`,
  );
  const merged = definedEnv({ ...home.env, ...env }) as NodeJS.ProcessEnv;
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: packed.project().dir, env: merged, timeout: 20_000 }, (error, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
    });
  });
}

describe('client.fetch', () => {
  it('calls the API as the signed-in user and returns a standard Response', async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const response = await client.fetch('/api/courses');
      return { isResponse: response instanceof Response, status: response.status, type: response.headers.get('content-type'), body: await response.json(), profile: client.profile };
    `);
    expect(run.json?.result, run.stderr + run.stdout).toMatchObject({ isResponse: true, status: 200, profile: 'default', body: { anonymous: false, sub: 'user-ada' } });
    expect(run.json.result.type).toMatch(/json/);
    expect(run.code).toBe(0);
  });

  it('sends the method, headers and body it is given', async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const response = await client.fetch('/api/echo?x=1', { method: 'POST', headers: { 'content-type': 'application/json', 'x-trace': 'abc' }, body: JSON.stringify({ title: 'Algebra' }) });
      return await response.json();
    `);
    expect(run.json?.result, run.stderr).toMatchObject({
      method: 'POST',
      query: { x: '1' },
      body: '{"title":"Algebra"}',
      authenticated: true,
      headers: { 'x-trace': 'abc', 'content-type': 'application/json', authorization: 'Bearer <redacted>' },
    });
  });

  it('init.headers and batch headers follow the header rule: Host, or Authorization toward the platform, is a UsageError and nothing is sent', async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const tries = [
        () => client.fetch('/api/echo', { headers: { Host: 'tenant-b.example' } }),
        () => client.fetch('/api/echo', { headers: [['authorization', 'Bearer someone-else']] }),
        () => client.fetch('/api/echo', { headers: new Headers({ 'Transfer-Encoding': 'chunked' }) }),
        // Any iterable of pairs fetch takes, a Map among them, is read by the same rule.
        () => client.fetch('/api/echo', { headers: new Map([['Host', 'tenant-b.example']]) }),
        async () => { for await (const r of client.batch([{ method: 'GET', path: '/api/echo', headers: { 'Authorization ': 'Bearer x' } }])) {} },
      ];
      const out = [];
      for (const attempt of tries) out.push(await attempt().then(() => 'sent', describe));
      return out;
    `);
    const errors = run.json?.result as Array<{ isUsageError: boolean; message: string }>;
    expect(errors, run.stderr + run.stdout).toHaveLength(5);
    for (const error of errors) expect(error.isUsageError, JSON.stringify(error)).toBe(true);
    expect(errors[0]!.message).toMatch(/^init.headers cannot set host: Host chooses which site on the server gets the request/);
    expect(errors[1]!.message).toMatch(/^init.headers cannot set authorization: plat sends the session's own credential/);
    expect(errors[2]!.message).toMatch(/^init.headers cannot set transfer-encoding/);
    expect(errors[3]!.message).toMatch(/^init.headers cannot set host: Host chooses/);
    expect(errors[4]!.message).toMatch(/^request 1: headers cannot set authorization/);
    expect(platform.stats.events.filter((e) => e.path.startsWith('/api/echo'))).toEqual([]);
  });

  it("an HTTP error status is the caller's to read, as with fetch", async () => {
    await loggedIn();
    const run = await program(`
      const response = await createClient().fetch('/api/nothing-here');
      return { status: response.status, ok: response.ok };
    `);
    expect(run.json?.result, run.stderr).toEqual({ status: 404, ok: false });
  });

  it('refreshes once and retries on 401 invalid_token', async () => {
    await loggedIn();
    let rejected = false;
    platform.override('/api/courses', (_req, res) => {
      if (rejected) return false;
      rejected = true;
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
      res.end('{"error":"invalid_token"}');
      return true;
    });
    const run = await program(`
      const response = await createClient().fetch('/api/courses');
      return { status: response.status, body: await response.json() };
    `);
    expect(run.json?.result, run.stderr).toMatchObject({ status: 200, body: { anonymous: false } });
    expect(platform.stats.count('token:refresh_token')).toBe(1);
  });

  it('a token still rejected after the refresh: AuthError', async () => {
    await loggedIn();
    platform.override('/api/courses', (_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
      res.end('{"error":"invalid_token"}');
      return true;
    });
    const run = await program(`await createClient().fetch('/api/courses');`);
    expect(run.json?.error, run.stderr).toMatchObject({ isAuthError: true, isPlatError: true, exitCode: 4 });
    expect(run.json.error.message).toMatch(/plat login/);
  });

  it("a client's secrets stay bounded over many refreshes, and its current tokens are still scrubbed from the errors it throws", async () => {
    await loggedIn();
    const REFRESHES = 80; // more than the set holds (KnownSecrets.CAPACITY, 64) even at one new value per refresh
    const bearer = (req: import('node:http').IncomingMessage) => String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const accessTokens: string[] = [];
    // Every other request is refused with invalid_token: each fetch's first try, so each fetch refreshes once.
    let calls = 0;
    platform.override('/api/courses', (req, res) => {
      accessTokens.push(bearer(req));
      if (++calls % 2 === 0) return false;
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
      res.end('{"error":"invalid_token"}');
      return true;
    });
    // The refreshes after REFRESHES fail, the server quoting the refresh token it got, the access token in use and
    // the very first access token of the run.
    let refreshes = 0;
    platform.override('/api/oauth/token', (req, res) => {
      if (++refreshes <= REFRESHES) return false;
      let text = '';
      req.setEncoding('utf8').on('data', (d: string) => (text += d));
      req.on('end', () => {
        const current = accessTokens.at(-1);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_request', error_description: `rejected refresh token ${new URLSearchParams(text).get('refresh_token')} after access token ${current}; first ${accessTokens[0]}` }));
      });
      return true;
    });
    const run = await program(`
      const client = createClient();
      for (let i = 0; i < ${REFRESHES}; i++) {
        const response = await client.fetch('/api/courses');
        if (response.status !== 200) throw new Error('status ' + response.status);
        await response.arrayBuffer();
      }
      try { await client.fetch('/api/courses'); return 'answered'; }
      catch (e) { return { ...describe(e), stack: e.stack }; }
    `);
    expect(run.json?.result, run.stderr + run.stdout).toMatchObject({ isPlatError: true });
    expect(platform.stats.count('token:refresh_token')).toBe(REFRESHES);
    const { message, stack } = run.json.result;
    const current = accessTokens.at(-1)!;
    expect(current).not.toBe(accessTokens[0]);
    // The tokens in use are scrubbed, from the message and from the stack that repeats it.
    expect(message).toMatch(/rejected refresh token \[redacted\] after access token \[redacted\]/);
    expect(message).not.toContain(current);
    expect(stack).not.toContain(current);
    // A token spent REFRESHES refreshes ago is no longer held: the set does not grow with every refresh.
    expect(message).toContain(`first ${accessTokens[0]}`);
  });

  it('403 insufficient_scope: a ScopeError naming the scope and the login that adds it', async () => {
    await loggedIn(['--scope', 'courses:read']);
    const run = await program(`await createClient().fetch('/api/students');`);
    expect(run.json?.error, run.stderr).toMatchObject({ isScopeError: true, exitCode: 5, name: 'ScopeError' });
    expect(run.json.error.message).toContain('students:read');
    expect(run.json.error.message).toMatch(/plat login .*--add-scope/);
  });

  it("sends the token only to the session's origin", async () => {
    await loggedIn();
    const seen: Array<string | undefined> = [];
    const other: Server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/elsewhere`;
      const run = await program(`
        const response = await createClient().fetch(${JSON.stringify(url)});
        return response.status;
      `);
      expect(run.json?.result, run.stderr).toBe(200);
      expect(seen).toEqual([undefined]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('not logged in: an AuthError that says to run plat login, and no browser', async () => {
    const run = await program(`await createClient({ baseUrl: ${JSON.stringify(platform.baseUrl)} }).fetch('/api/courses');`, { BROWSER: 'false-browser-must-not-run' });
    expect(run.json?.error, run.stderr).toMatchObject({ isAuthError: true, exitCode: 4 });
    expect(run.json.error.message).toMatch(/Not logged in\. Run: plat login/);
    expect(platform.stats.count('GET /oauth/authorize')).toBe(0);
  });

  it("a baseUrl other than the session's platform: AuthError naming the session's origin, no token sent", async () => {
    await loggedIn();
    const run = await program(`await createClient({ baseUrl: 'http://127.0.0.1:9' }).fetch('/api/courses');`);
    expect(run.json?.error, run.stderr).toMatchObject({ isAuthError: true, exitCode: 4 });
    expect(run.json.error.message).toContain(`is signed in to ${platform.baseUrl}, not to http://127.0.0.1:9`);
  });

  it('uses the profile it is given', async () => {
    const login = await home.login(platform, ['--profile', 'work', '--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    const run = await program(`
      const work = await createClient({ profile: 'work' }).fetch('/api/courses');
      let other;
      try { await createClient().fetch('/api/courses'); } catch (e) { other = describe(e); }
      return { work: (await work.json()).sub, other };
    `);
    expect(run.json?.result, run.stderr).toMatchObject({ work: 'user-ada', other: { isAuthError: true } });
  });

  it('init.signal aborts the request, rejecting with the signal\'s reason as fetch does', async () => {
    await loggedIn();
    platform.override('/api/slow', () => true); // never answers
    const run = await program(`
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const started = Date.now();
      try { await createClient().fetch('/api/slow', { signal: controller.signal }); return 'answered'; }
      catch (e) { return { name: e.name, ms: Date.now() - started }; }
    `);
    expect(run.json?.result, run.stderr).toMatchObject({ name: 'AbortError' });
    expect(run.json.result.ms).toBeLessThan(scaled(5_000));
  });

  it('without a profile option: the one plat switch made current, as the command does', async () => {
    const login = await home.login(platform, ['--profile', 'work', '--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    const switched = await home.run(['switch', 'work']);
    expect(switched.code, switched.stderr).toBe(0);
    const run = await program(`
      const client = createClient();
      return { profile: client.profile, sub: (await (await client.fetch('/api/courses')).json()).sub, pinned: createClient({ profile: 'default' }).profile };
    `);
    expect(run.json?.result, run.stderr).toEqual({ profile: 'work', sub: 'user-ada', pinned: 'default' });
  });

  it('a bad profile name is a UsageError at once', async () => {
    const run = await program(`createClient({ profile: '../etc' });`);
    expect(run.json?.error).toMatchObject({ isUsageError: true, exitCode: 2 });
  });
});

describe('client.token', () => {
  it('returns the stored token with its expiry, scopes, profile and origin', async () => {
    await loggedIn();
    const cli = (await home.run(['token'])).stdout.trim();
    const run = await program(`
      const t = await createClient().token();
      return { ...t, expiresAt: t.expiresAt instanceof Date ? t.expiresAt.toISOString() : t.expiresAt };
    `);
    const token = run.json?.result;
    expect(token, run.stderr).toMatchObject({ accessToken: cli, tokenType: 'Bearer', profile: 'default', baseUrl: platform.baseUrl });
    expect(token.scopes).toContain('courses:read');
    expect(Date.parse(token.expiresAt) - Date.now()).toBeGreaterThan(3_000_000);
  });

  it('minTtl refreshes first when the token would expire sooner, and shares the refresh with the CLI', async () => {
    platform.knobs.accessTokenTtl = 300;
    await loggedIn();
    platform.knobs.accessTokenTtl = 3600;
    const run = await program(`
      const client = createClient();
      const [a, b] = await Promise.all([client.token({ minTtl: 900 }), client.token({ minTtl: 900 })]);
      return { same: a.accessToken === b.accessToken, left: (a.expiresAt.getTime() - Date.now()) / 1000, token: a.accessToken };
    `);
    expect(run.json?.result, run.stderr).toMatchObject({ same: true });
    expect(run.json.result.left).toBeGreaterThan(900);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    // The CLI sees the refreshed session: one store, one lock.
    expect((await home.run(['token'])).stdout.trim()).toBe(run.json.result.token);
  });

  it('minTtl the server cannot meet: AuthError', async () => {
    platform.knobs.accessTokenTtl = 300;
    await loggedIn();
    const run = await program(`await createClient().token({ minTtl: 3600 });`);
    expect(run.json?.error, run.stderr).toMatchObject({ isAuthError: true, exitCode: 4 });
    expect(run.json.error.message).toMatch(/less than the 3600 s asked for/);
  });
});

describe("plat help scripting's library example", () => {
  it('runs as written against a signed-in session', async () => {
    await loggedIn(['--scope', 'courses:read']);
    const topic = await (await import('node:fs/promises')).readFile(new URL('../../src/help/topics/scripting.md', import.meta.url), 'utf8');
    const start = topic.indexOf('## Use your plat login from other programs');
    expect(start).toBeGreaterThan(0);
    const section = topic.slice(start);
    const example = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    expect(example!.trim().split('\n').length).toBeLessThanOrEqual(12);
    const file = await packed.project().script('readme-example.mjs', example!);
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [file], { cwd: packed.project().dir, env: home.env as NodeJS.ProcessEnv, timeout: 20_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("sub: 'user-ada'");
    // The session has courses:read only: the POST is refused and the ScopeError says how to get courses:write.
    expect(run.stderr).toContain('courses:write');
    expect(run.stderr).toMatch(/plat login --add-scope courses:write/);
  });
});

describe('importing the library', () => {
  it('loads no command-line machinery: commander, chalk, ora (not even after a call)', async () => {
    await loggedIn();
    const log = `${packed.project().dir}/resolved-${Date.now()}.log`;
    const hooks = await packed.project().script(
      'log-hooks.mjs',
      `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, result.url + '\\n');
  return result;
}`,
    );
    const register = await packed.project().script(
      'register-hooks.mjs',
      `import { register } from 'node:module'; import { pathToFileURL } from 'node:url'; register(${JSON.stringify(`file://${hooks}`)});`,
    );
    const run = await program(
      `
      const response = await createClient().fetch('/api/courses');
      await response.text();
      await createClient().token();
      const { createRequire } = await import('node:module');
      return Object.keys(createRequire(import.meta.url).cache);
    `,
      { NODE_OPTIONS: `--import ${register}` },
    );
    expect(run.json?.result, run.stderr).toBeDefined();
    const { readFile } = await import('node:fs/promises');
    const resolved = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    expect(resolved.some((url) => url.includes('/plat-cli/dist/library/'))).toBe(true);
    const loaded = [...resolved, ...(run.json.result as string[])];
    for (const name of ['commander', 'chalk', 'ora']) {
      expect(loaded.filter((url) => url.includes(`/node_modules/${name}/`)), name).toEqual([]);
    }
  });
});

describe('client.paginate', () => {
  it('yields every item of every page, as plat call --paginate finds them, with the session\'s token', async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const ids = [];
      for await (const course of client.paginate('/api/lists/cursor?per_page=7')) ids.push(course.id);
      return ids;
    `);
    expect(run.json?.result, run.stderr + run.stdout).toHaveLength(95);
    expect(run.json.result[0]).toBe('course-0001');
    expect(run.json.result[94]).toBe('course-0095');
    expect(platform.lists.served.cursor).toBe(14);
  });

  it('takes maxItems and the items/next paths', async () => {
    await loggedIn();
    const run = await program(`
      const ids = [];
      for await (const row of createClient().paginate('/api/lists/custom', { items: 'result.rows', next: 'paging.after=after', maxItems: 25 })) ids.push(row.id);
      return ids;
    `);
    expect(run.json?.result, run.stderr + run.stdout).toHaveLength(25);
    expect(platform.lists.served.custom).toBe(3);
  });

  it('a page that fails rejects the iteration with the CLI\'s error, after the items before it', async () => {
    await loggedIn();
    platform.lists.fail = { page: 2, status: 500, times: 100 };
    const run = await program(`
      const ids = [];
      try {
        for await (const course of createClient().paginate('/api/lists/link')) ids.push(course.id);
      } catch (error) {
        return { ids: ids.length, error: describe(error) };
      }
    `);
    expect(run.json?.result, run.stderr + run.stdout).toMatchObject({ ids: 10, error: { isPlatError: true, exitCode: 1, message: expect.stringMatching(/Page 2: HTTP 500/) } });
  });
});

describe('client.batch', () => {
  it("sends every request over the session, N at a time, and yields plat batch's results (in order when asked)", async () => {
    await loggedIn();
    // The server counts the requests in flight, and holds the first four until the fourth arrives: four at a time
    // is seen as it happens, whatever the machine's speed (one at a time would never send the second).
    let inFlight = 0;
    let peak = 0;
    let releaseFirst!: () => void;
    const fourArrived = new Promise<void>((resolve) => (releaseFirst = resolve));
    platform.override('/api/courses', (_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      res.on('close', () => inFlight--);
      if (peak >= 4) {
        releaseFirst();
        return false;
      }
      return fourArrived.then(() => false);
    });
    const run = await program(`
      const client = createClient();
      function* requests() {
        for (let i = 1; i <= 12; i++) yield { id: 'r' + i, method: 'GET', path: i === 5 ? '/api/status/404' : '/api/courses' };
      }
      const out = [];
      for await (const result of client.batch(requests(), { concurrency: 4, ordered: true })) out.push({ id: result.id, line: result.line, status: result.status, ok: result.ok, sub: result.body?.sub });
      return { out };
    `);
    const { out } = run.json?.result ?? {};
    expect(out, run.stderr + run.stdout).toHaveLength(12);
    expect(out.map((r: { line: number }) => r.line)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(out[0]).toEqual({ id: 'r1', line: 1, status: 200, ok: true, sub: 'user-ada' });
    expect(out[4]).toMatchObject({ id: 'r5', status: 404, ok: false });
    expect(peak).toBe(4);
    expect(platform.stats.count('GET /api/courses')).toBe(11);
  });

  it('client.batch(): a request nested 40,000 deep is a UsageError naming the request and the member, not a stack overflow', async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      let deep = 1;
      for (let i = 0; i < 40000; i++) deep = { a: deep };
      const errors = [];
      for (const request of [{ method: 'POST', path: '/api/echo', body: deep }, { method: 'GET', path: '/api/echo', query: { q: deep } }]) {
        try {
          for await (const _ of client.batch([request])) {}
        } catch (error) {
          errors.push(describe(error));
        }
      }
      return errors;
    `);
    expect(run.json?.result, run.stderr + run.stdout).toEqual([
      expect.objectContaining({ isUsageError: true, message: expect.stringMatching(/^request 1: "body" is nested more than 100 levels deep/) }),
      expect.objectContaining({ isUsageError: true, message: expect.stringMatching(/^request 1: "query" is nested more than 100 levels deep/) }),
    ]);
    expect(platform.stats.count('POST /api/echo') + platform.stats.count('GET /api/echo')).toBe(0);
  });

  it('a query object: a list repeats its name, an object is name[member], a list of objects is refused, never [object Object]', async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const out = [];
      for await (const result of client.batch([{ method: 'GET', path: '/api/echo', query: { ids: [1, 2], 'tag[]': ['a'], filter: { year: 2 } } }])) out.push(result.body.query);
      try {
        for await (const _ of client.batch([{ method: 'GET', path: '/api/echo', query: { filter: [{ year: 2 }] } }])) {}
      } catch (error) {
        return { out, error: describe(error) };
      }
    `);
    expect(run.json?.result, run.stderr + run.stdout).toEqual({
      out: [{ ids: ['1', '2'], 'tag[]': 'a', 'filter[year]': '2' }],
      error: expect.objectContaining({ isUsageError: true, message: 'request 1: query "filter": an object inside a list has no query form.' }),
    });
    expect(platform.stats.count('GET /api/echo')).toBe(1);
  });

  it("refuses the shapes plat batch refuses (one builder for both): a member neither takes, a header that is not text, an op line's member", async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const shapes = [
        { method: 'GET', path: '/api/echo', qeury: { a: 1 } },
        { method: 'GET', path: '/api/echo', headers: { 'x-count': 1 } },
        { op: 'listCourses', method: 'GET' },
      ];
      const out = [];
      for (const shape of shapes) {
        try {
          for await (const _ of client.batch([shape])) {}
          out.push('sent');
        } catch (error) {
          out.push(describe(error));
        }
      }
      return out;
    `);
    expect(run.json?.result, run.stderr + run.stdout).toEqual([
      expect.objectContaining({ isUsageError: true, message: 'request 1: unknown member "qeury" (a request takes id, method, path, query, headers, body; or id, op, params, body).' }),
      expect.objectContaining({ isUsageError: true, message: 'request 1: headers["x-count"] must be a string.' }),
      expect.objectContaining({ isUsageError: true, message: 'request 1: unknown member "method" (an op request takes id, op, params, body).' }),
    ]);
    expect(platform.stats.events.filter((e) => e.path.startsWith('/api/echo'))).toEqual([]);
  });

  it("takes plat batch's op lines: {op, params, body} built from the API description as plat op builds them, refused in plat batch's words", async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const out = [];
      const lines = [{ id: 'one', op: 'getCourse', params: { courseId: 'course-101', include: 'lessons' } }, { op: 'listCourses' }];
      for await (const result of client.batch(lines, { ordered: true })) out.push({ id: result.id, status: result.status, ok: result.ok, course: result.body?.course?.id });
      const refused = [];
      for (const line of [{ op: 'getCourse', params: { courseId: 'no such/../thing' } }, { op: 'getCourze' }, { op: 'getCourse', params: { bogus: 1 } }]) {
        try {
          for await (const _ of client.batch([line])) {}
          refused.push('sent');
        } catch (error) {
          refused.push(describe(error));
        }
      }
      return { out, refused };
    `);
    const result = run.json?.result;
    expect(result, run.stderr + run.stdout).toBeDefined();
    expect(result.out).toEqual([
      { id: 'one', status: 200, ok: true, course: 'course-101' },
      { id: 2, status: 200, ok: true },
    ]);
    expect(platform.stats.count('GET /api/courses/course-101')).toBe(1);
    expect(platform.stats.count('GET /openapi.json'), 'the description is read once').toBe(1);
    // plat batch, given the same lines, refuses each with the same phrase (its "line 1: …", the library's "request 1: ….").
    const said: string[] = [];
    for (const line of ['{"op":"getCourse","params":{"courseId":"no such/../thing"}}', '{"op":"getCourze"}', '{"op":"getCourse","params":{"bogus":1}}']) {
      const batch = await home.run(['batch', '-'], { stdin: `${line}\n` });
      expect(batch.code, batch.stderr).toBe(2);
      said.push(/  line 1: (.*)/.exec(batch.stderr)![1]!);
    }
    expect(said[1]).toBe('the platform\'s API has no operation "getCourze" (plat op lists them)');
    expect(result.refused).toEqual(said.map((phrase) => expect.objectContaining({ isUsageError: true, exitCode: 2, message: `request 1: ${phrase}.` })));
  });

  it('a bad request is a UsageError', async () => {
    await loggedIn();
    const run = await program(`
      for await (const _ of createClient().batch([{ method: 'GET' }])) {}
    `);
    expect(run.json?.error, run.stderr + run.stdout).toMatchObject({ isUsageError: true, message: expect.stringMatching(/request 1: path must be/) });
  });
});

describe('client.proxy', () => {
  it("serves the platform at a local URL with the session's token, read-only by default, until close()", async () => {
    await loggedIn();
    const run = await program(`
      const client = createClient();
      const proxy = await client.proxy({ port: 0 });
      const courses = await fetch(proxy.url + 'api/courses');
      const write = await fetch(proxy.url + 'api/courses', { method: 'POST', body: '{}' });
      const noKey = await fetch(new URL('/api/courses', proxy.url));
      await proxy.close();
      let after;
      try { await fetch(proxy.url + 'api/courses'); after = 'answered'; } catch (error) { after = error.cause?.code; }
      let badPort;
      try { await client.proxy({ port: 70000 }); } catch (error) { badPort = describe(error); }
      return { url: proxy.url, status: courses.status, body: await courses.json(), write: write.status, writeBody: await write.json(), noKey: noKey.status, after, badPort };
    `);
    const result = run.json?.result;
    expect(result, run.stderr + run.stdout).toBeDefined();
    expect(result.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}\/$/);
    expect(result).toMatchObject({ status: 200, body: { anonymous: false, sub: 'user-ada' }, write: 405, writeBody: { error: 'read_only' }, noKey: 403 });
    // Closed: a kept-alive connection is ended (UND_ERR_SOCKET) and a new one refused (ECONNREFUSED).
    expect(['ECONNREFUSED', 'UND_ERR_SOCKET']).toContain(result.after);
    expect(result.badPort).toMatchObject({ isUsageError: true, exitCode: 2 });
    expect(run.code).toBe(0);
  });

  it('survives a CONNECT and an upgrade the client resets, and takes a doubled slash after the key as one (the server of plat proxy)', async () => {
    await loggedIn();
    const run = await program(`
      const { connect } = await import('node:net');
      const client = createClient();
      const proxy = await client.proxy({ port: 0 });
      const { port, host, pathname } = new URL(proxy.url);
      const resetAfterAnswer = (text) => new Promise((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
        socket.on('error', () => {});
        socket.once('data', (d) => { socket.resetAndDestroy(); resolve(d.toString('latin1').split('\\r\\n')[0]); });
      });
      const tunnel = await resetAfterAnswer('CONNECT school.invalid:443 HTTP/1.1\\r\\nHost: school.invalid:443\\r\\n\\r\\n');
      const upgrade = await resetAfterAnswer('GET ' + pathname + 'api/courses HTTP/1.1\\r\\nHost: ' + host + '\\r\\nConnection: Upgrade\\r\\nUpgrade: websocket\\r\\n\\r\\n');
      // The resets reach the proxy before the next request does: a proxy they ended would refuse it.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const doubled = await fetch(proxy.url + '/api/courses');
      const lost = await fetch(new URL('/api/courses', proxy.url));
      const result = { tunnel, upgrade, doubled: doubled.status, body: await doubled.json(), lost: lost.status, lostBody: await lost.json() };
      await proxy.close();
      return result;
    `);
    const result = run.json?.result;
    expect(result, run.stderr + run.stdout).toBeDefined();
    expect(result).toMatchObject({ tunnel: 'HTTP/1.1 405 Method Not Allowed', upgrade: 'HTTP/1.1 501 Not Implemented', doubled: 200, body: { anonymous: false, sub: 'user-ada' }, lost: 403 });
    expect(result.lostBody.message).toMatch(/first path segment of PLAT_PROXY_URL/);
    expect(run.code).toBe(0);
  });
});
