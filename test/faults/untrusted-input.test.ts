/**
 * Where untrusted input meets the session (issue 32): header names from every way in, and secrets a hostile API
 * echoes back in the forms plat's raw-text scrub once missed. The reference platform is the session's origin and
 * records the Host each request arrived with (a front end that routes by Host would hand the request, and its
 * token, to the tenant that Host names); the hostile server is another origin that logs every header it receives.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError, type PlatResult } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { decodeEverySpelling } from '../helpers/secrets.js';
import { serveDescription } from './hostile-descriptions.js';
import { sendJson, startHostile, type Hostile } from './hostile.js';

const platform = usePlatform();
const home = useHome(() => ({ PLAT_BASE_URL: platform.baseUrl }));
let hostile: Hostile;

beforeAll(async () => {
  hostile = await startHostile();
});
afterAll(async () => {
  await hostile.close();
});
beforeEach(() => {
  hostile.reset();
});

/** Every request /api/tenant received: the Host it came with and whether a token did. */
let tenantSeen: Array<{ host: string | undefined; authorization: string | undefined; tenant: string | undefined }> = [];

/** A description whose operation names Host, Authorization and Content-Length as header parameters, beside a fair one. */
function serveTenantDescription() {
  tenantSeen = [];
  serveDescription(platform, {
    openapi: '3.1.0',
    info: { title: 'tenants', version: '1' },
    paths: {
      '/api/tenant': {
        get: {
          operationId: 'tenantCourses',
          summary: 'Courses of a tenant',
          parameters: [
            { name: 'Host', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'Authorization', in: 'header', schema: { type: 'string' } },
            { name: 'content-length', in: 'header', schema: { type: 'string' } },
            { name: 'X-Tenant', in: 'header', schema: { type: 'string' } },
          ],
        },
      },
    },
  });
  platform.override('/api/tenant', (req, res) => {
    tenantSeen.push({ host: req.headers.host, authorization: req.headers.authorization, tenant: req.headers['x-tenant'] as string | undefined });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"courses":[]}');
    return true;
  });
}

const platformHost = () => new URL(platform.baseUrl).host;
const usage = (result: PlatResult, pattern: RegExp) => {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toMatch(pattern);
  expectCleanError(result);
};

describe('an API description’s header parameter named Host (or Authorization, Content-Length)', () => {
  it('is not offered by plat op: --help says why, --Host is refused (exit 2) and nothing is sent', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    serveTenantDescription();
    const help = await home.run(['op', 'tenantCourses', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).not.toMatch(/--Host|--Authorization|--content-length/);
    expect(help.stdout).toContain('--X-Tenant');
    // The help is wrapped to the terminal's width: the sentences are read with their line breaks as spaces.
    const words = help.stdout.replace(/\s+/g, ' ');
    expect(words).toMatch(/Not offered: the header parameter Host, because Host chooses which site on the server gets the request/);
    expect(words).toMatch(/Not offered: the header parameter Authorization, because plat sends the session's own credential/);

    usage(await home.run(['op', 'tenantCourses', '--Host', 'tenant-b.example']), /tenantCourses's header parameter Host is not taken from input: Host chooses/);
    usage(await home.run(['op', 'tenantCourses', '-p', 'authorization=Bearer other']), /header parameter Authorization is not taken from input/);
    expect(tenantSeen).toEqual([]);

    // Its required Host is not asked for: the request goes with the platform's own Host, and the token.
    const sent = await home.run(['op', 'tenantCourses', '--X-Tenant', 'a']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(tenantSeen).toEqual([{ host: platformHost(), authorization: expect.stringMatching(/^Bearer /), tenant: 'a' }]);
  });

  it('a batch op line that fills it is a line error (exit 2) and nothing is sent', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    serveTenantDescription();
    const lines = `${JSON.stringify({ op: 'tenantCourses', params: { 'X-Tenant': 'a' } })}\n${JSON.stringify({ op: 'tenantCourses', params: { Host: 'tenant-b.example' } })}\n`;
    usage(await home.run(['batch', '-'], { stdin: lines }), /line 2: tenantCourses's header parameter Host is not taken from input/);
    expect(tenantSeen).toEqual([]);
  });
});

describe('-H: one rule for header names, compared trimmed and case-folded', () => {
  it.each([
    ['Host: tenant-b.example', /-H host is not sent: Host chooses which site/],
    ['  HOST : tenant-b.example', /-H host is not sent/],
    ['Transfer-Encoding: chunked', /-H transfer-encoding is not sent: plat's HTTP client sets transfer-encoding itself/],
    ['Content-Length: 0', /-H content-length is not sent/],
    ['Proxy-Authorization: Basic eA==', /-H proxy-authorization is not sent/],
    ['Sec-Fetch-Site: same-origin', /-H sec-fetch-site is not sent/],
    ['Authorization: Bearer someone-else', /-H authorization is not sent: plat sends the session's own credential to the platform/],
    ['Cookie: session=someone-else', /-H cookie is not sent/],
  ])('plat call -H %j toward the platform: exit 2, nothing sent', async (header, pattern) => {
    serveTenantDescription();
    usage(await home.run(['call', 'GET', '/api/tenant', '-H', header]), pattern);
    expect(tenantSeen).toEqual([]);
  });

  it('Authorization toward another origin is the person’s to send; Host is refused there too', async () => {
    hostile.on('/api/other', sendJson(200, { ok: true }));
    const sent = await home.run(['call', 'GET', `${hostile.baseUrl}/api/other`, '-H', 'Authorization: Bearer their-own']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(hostile.log.map((r) => r.authorization)).toEqual(['Bearer their-own']);
    usage(await home.run(['call', 'GET', `${hostile.baseUrl}/api/other`, '-H', 'Host: tenant-b.example']), /-H host is not sent/);
    expect(hostile.log).toHaveLength(1);
  });
});

describe('a batch line’s headers', () => {
  it('"Authorization " with a trailing space is Authorization: a line error (exit 2), nothing sent', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    serveTenantDescription();
    const lines = [
      { method: 'GET', path: '/api/tenant' },
      { method: 'GET', path: '/api/tenant', headers: { 'Authorization ': 'Bearer someone-else' } },
      { method: 'GET', path: '/api/tenant', headers: { Host: 'tenant-b.example' } },
    ].map((line) => JSON.stringify(line)).join('\n');
    const result = await home.run(['batch', '-'], { stdin: `${lines}\n` });
    usage(result, /line 2: header authorization is not sent: plat sends the session's own credential/);
    expect(result.stderr).toMatch(/line 3: header host is not sent/);
    expect(tenantSeen).toEqual([]);
  });
});

describe('a token the API echoes back, in any spelling, never reaches batch results', () => {
  // PLAT_TOKEN, so the token holds a slash (JSON's \/) and characters percent-encoding changes.
  const token = 'plat-test/echoed+token/0123456789';
  const unicode = (t: string) => [...t].map((c, i) => (i % 2 ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)).join('');
  const percent = (t: string) => [...t].map((c, i) => (i % 3 ? c : `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('');
  it.each([
    ['raw in JSON', 'application/json', JSON.stringify({ echo: token })],
    ['\\u-escaped, mixed with plain characters', 'application/json', `{"echo":"${unicode(token)}"}`],
    ['\\/-escaped, as PHP writes JSON', 'application/json', JSON.stringify({ echo: token }).replaceAll('/', '\\/')],
    ['\\/-escaped in a text body', 'text/plain', `echo: ${token.replaceAll('/', '\\/')}`],
    ['percent-encoded inside a JSON string', 'application/json', JSON.stringify({ next: `/api/x?token=${percent(token)}` })],
    ['percent-encoded in a text body', 'text/plain', `token=${encodeURIComponent(token)}`],
  ])('%s', async (_name, type, body) => {
    platform.override('/api/echo-token', (_req, res) => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
      return true;
    });
    const result = await home.run(['batch', '-'], { stdin: `${JSON.stringify({ method: 'GET', path: '/api/echo-token' })}\n`, env: { PLAT_TOKEN: token } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('[redacted]');
    expect(decodeEverySpelling(result.stdout)).not.toContain(token);
  });
});

describe('--verbose and errors: stderr is scrubbed of every spelling', () => {
  it('a response header echoing the token percent-encoded or \\u-escaped: [redacted] in the trace; plat call’s body stays byte-exact', async () => {
    const token = 'plat-test/echoed+token/0123456789';
    const body = JSON.stringify({ error: 'bad', token });
    platform.override('/api/echo-verbose', (_req, res) => {
      res.writeHead(400, {
        'content-type': 'application/json',
        'x-echo': encodeURIComponent(token),
        'x-echo-json': [...token].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
      });
      res.end(body);
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/echo-verbose', '--verbose'], { env: { PLAT_TOKEN: token } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/< x-echo: \[redacted\]/);
    expect(result.stderr).toMatch(/< x-echo-json: \[redacted\]/);
    expect(decodeEverySpelling(result.stderr)).not.toContain(token);
    // The body is data, as the server sent it (the contract): the token the server chose to echo is there.
    expect(result.stdout).toBe(body);
  });
  it('plat call -i: the response head on stdout is scrubbed too (a Location or any header echoing the token, in any spelling); the body stays byte-exact', async () => {
    const token = 'plat-test/echoed+token/0123456789';
    const body = JSON.stringify({ token });
    platform.override('/api/echo-head', (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        location: `/next?access_token=${encodeURIComponent(token)}`,
        'x-echo': token,
      });
      res.end(body);
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/echo-head', '-i'], { env: { PLAT_TOKEN: token } });
    expect(result.code, result.stderr).toBe(0);
    const [head, rest] = [result.stdout.slice(0, result.stdout.indexOf('\n\n')), result.stdout.slice(result.stdout.indexOf('\n\n') + 2)];
    expect(head).toMatch(/^location: \/next\?access_token=\[redacted\]$/m);
    expect(head).toMatch(/^x-echo: \[redacted\]$/m);
    expect(decodeEverySpelling(head)).not.toContain(token);
    expect(rest).toBe(body);
  });
});

describe('a 403 insufficient_scope from another origin', () => {
  it('gives no --add-scope for this profile: it names the origin that refused and that the session was not sent there (exit 1)', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    hostile.on('/api/steer', sendJson(403, { error: 'insufficient_scope' }, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="courses:write"' }));
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/steer`]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `${hostile.baseUrl} refused GET /api/steer for lack of the scope "courses:write" (HTTP 403); this session's platform is ${platform.baseUrl}, and its token was not sent there. No plat login changes what that server grants.`,
    );
    expect(result.stderr).not.toMatch(/add-scope|plat login --/);
    expect(hostile.leaks(platform.secrets())).toEqual([]);
    expectCleanError(result);
  });
});
