/**
 * The platform's own catalogue at hand: `plat scopes` (metadata's scopes_supported with the spec's descriptions,
 * the session's marked), `plat op` (operations from /openapi.json, cached), `plat call`'s checks against the cached
 * document (unknown paths, scopes the session lacks), and `plat discover` (what the metadata says).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

async function loggedIn(scopes = 'openid profile courses:read') {
  const result = await home.login(platform, ['--scope', scopes]);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

/** Serves a document instead of the platform's own at `route`. */
function serve(route: string, status: number, body: string, type = 'application/json') {
  platform.override(route, (_req, res) => {
    res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) }).end(body);
    return true;
  });
}

describe('plat scopes', () => {
  it('lists the server\'s scopes with what each grants, without a session', async () => {
    const result = await home.run(['scopes', '--base-url', platform.baseUrl]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(38);
    expect(lines[0]).toMatch(/^openid\s+OpenID Connect authentication$/);
    expect(result.stdout).toMatch(/^membership_plans:write\s+write membership plans$/m);
    expect(result.stdout).not.toContain('granted');
    expect(result.stderr).toMatch(/Not logged in: plat login --scope <scope>/);
  });

  it('aligns its columns', async () => {
    const result = await home.run(['scopes', '--base-url', platform.baseUrl]);
    const starts = new Set(result.stdout.trimEnd().split('\n').map((line) => line.search(/ \S/) + 1));
    expect(starts.size).toBe(1);
  });

  it('marks the scopes the session holds', async () => {
    await loggedIn();
    const result = await home.run(['scopes']);
    expect(result.code, result.stderr).toBe(0);
    const granted = result.stdout.split('\n').filter((l) => l.endsWith('granted')).map((l) => l.split(/\s+/)[0]);
    expect(granted).toEqual(['openid', 'profile', 'email', 'courses:read']);
    expect(result.stderr).toMatch(/holds 4 of 38\. To add one: plat login --add-scope <scope>/);
    const json = JSON.parse((await home.run(['scopes', '--json'])).stdout) as { loggedIn: boolean; scopes: Array<{ name: string; granted: boolean }> };
    expect(json.loggedIn).toBe(true);
    expect(json.scopes.filter((s) => s.granted).map((s) => s.name)).toEqual(['openid', 'profile', 'email', 'courses:read']);
  });

  it('takes the list from the server, describing only the scopes the spec documents', async () => {
    const metadata = (await (await fetch(`${platform.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    serve('/.well-known/oauth-authorization-server', 200, JSON.stringify({ ...metadata, scopes_supported: ['openid', 'courses:read', 'lab:experiments'] }));
    const json = JSON.parse((await home.run(['scopes', '--base-url', platform.baseUrl, '--json'])).stdout) as unknown;
    expect(json).toEqual({
      baseUrl: platform.baseUrl,
      source: 'server',
      profile: 'default',
      loggedIn: false,
      scopes: [
        { name: 'openid', description: 'OpenID Connect authentication', granted: false },
        { name: 'courses:read', description: 'read courses', granted: false },
        { name: 'lab:experiments', description: null, granted: false },
      ],
    });
  });

  it('shows the spec\'s catalogue, and says so, when no platform is known', async () => {
    const result = await home.run(['scopes', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ baseUrl: null, source: 'spec' });
    const human = await home.run(['scopes']);
    expect(human.stderr).toMatch(/No platform known \(pass --base-url or set PLAT_BASE_URL\)/);
    expect(human.stdout).toMatch(/^courses:read\s+read courses$/m);
  });

  it('exits 3 when the platform cannot be reached', async () => {
    const result = await home.run(['scopes', '--base-url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(3);
    expectCleanError(result);
  });
});

describe('plat op (the listing)', () => {
  it('lists method, path, summary and required scopes from /openapi.json', async () => {
    const result = await home.run(['op', '--base-url', platform.baseUrl]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^listCourses\s+GET\s+\/api\/courses\s+List courses\s+courses:read$/m);
    expect(result.stdout).toMatch(/^createCourse\s+POST\s+\/api\/courses\s+Create a course .*\s+courses:write$/m);
    expect(result.stdout).toMatch(/^status\s+GET\s+\/api\/status\/\{code\}\s+Respond with the given HTTP status\s+-$/m);
    // alternatives: either set of scopes will do
    expect(result.stdout).toMatch(/^getSchoolReport\s+GET\s+\/api\/reports\/school\s+.*\s+analytics:read \| school:read$/m);
    expect(result.stderr).toMatch(/\d+ operations in Learning Platform API \(reference platform\) 1\.0\.0, read just now\./);
  });

  it('filters by method, path, summary, operation id or scope', async () => {
    const base = ['op', '--base-url', platform.baseUrl];
    const lines = async (filter: string) => (await home.run([...base, filter])).stdout.trimEnd().split('\n');
    expect(await lines('/api/courses')).toHaveLength(5);
    expect(await lines('post courses')).toEqual([expect.stringMatching(/^createCourse\s+POST\s+\/api\/courses/)]);
    expect(await lines('students:read')).toEqual([expect.stringMatching(/^listStudents\s+GET\s+\/api\/students/), expect.stringMatching(/^listEnrolments\s/)]);
    expect(await lines('listStudents')).toHaveLength(1);
    // The note counts in the last number's terms: "1 of 37 operations", never "1 of 37 operation".
    expect((await home.run([...base, 'post courses'])).stderr).toMatch(/^1 of \d+ operations in /m);
    const json = JSON.parse((await home.run([...base, '/api/analytics', '--json'])).stdout) as { operations: unknown[] };
    expect(json.operations).toEqual([
      {
        method: 'GET',
        path: '/api/analytics',
        summary: 'Read analytics',
        operationId: 'getAnalytics',
        scopes: ['analytics:read'],
        anonymous: true,
        security: [['analytics:read'], []],
      },
    ]);
  });

  it('fetches the document once, without a token, and uses the cache for an hour (--refresh fetches again)', async () => {
    await loggedIn();
    const authorization: Array<string | undefined> = [];
    platform.override('/openapi.json', (req) => {
      authorization.push(req.headers.authorization);
      return false; // the platform's own document
    });
    for (let i = 0; i < 2; i++) expect((await home.run(['op'])).code).toBe(0);
    expect(platform.stats.count('GET /openapi.json')).toBe(1);
    expect(await readdir(path.join(home.configDir, 'cache'))).toEqual(expect.arrayContaining([expect.stringMatching(/^openapi-[0-9a-f]+\.json$/)]));
    expect((await home.run(['op', '--refresh'])).code).toBe(0);
    expect(platform.stats.count('GET /openapi.json')).toBe(2);
    expect(authorization).toEqual([undefined, undefined]);
  });

  it('explains a platform without a document, a document that is not JSON, and one that is too big (exit 1)', async () => {
    const base = ['op', '--base-url', platform.baseUrl];
    serve('/openapi.json', 404, '{"error":"not_found"}');
    let result = await home.run(base);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Could not read http:\/\/127\.0\.0\.1:\d+\/openapi\.json: the platform publishes no API description there\./);
    platform.clearOverrides();
    serve('/openapi.json', 200, '<html>hello</html>', 'text/html');
    result = await home.run(base);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/openapi\.json is not JSON/);
    platform.clearOverrides();
    serve('/openapi.json', 200, JSON.stringify({ pad: 'x'.repeat(11 * 1024 * 1024) }));
    result = await home.run(base);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/where a small document was expected|more than \d+ bytes/);
    platform.clearOverrides();
    serve('/openapi.json', 200, JSON.stringify({ openapi: '3.1.0' }));
    result = await home.run(base);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is not an OpenAPI document \(it has no "paths"\)/);
    expectCleanError(result);
  });

  it('is a usage error without a platform (exit 2)', async () => {
    const result = await home.run(['op']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/pass --base-url/);
  });
});

describe('plat call checks the cached API description', () => {
  it('warns about a path or a method the document does not list, and still calls', async () => {
    await loggedIn();
    expect((await home.run(['op'])).code).toBe(0);
    const unknown = await home.run(['call', 'GET', '/api/nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/warning: \/api\/nope is not in the platform's API description; check the path \(plat op lists the operations\)\./);
    const method = await home.run(['call', 'DELETE', '/api/students']);
    expect(method.stderr).toMatch(/warning: The platform's API description has no DELETE \/api\/students \(it has GET\)\./);
    const templated = await home.run(['call', 'GET', '/api/status/204']);
    expect(templated.code).toBe(0);
    expect(templated.stderr).toBe('');
  });

  it('says the scope an operation needs once: the insufficient_scope error names it, so no warning repeats it', async () => {
    await loggedIn();
    expect((await home.run(['op'])).code).toBe(0);
    const result = await home.run(['call', 'GET', '/api/students']);
    expect(result.code).toBe(5);
    expect(result.stderr).not.toMatch(/warning/);
    expect(result.stderr.match(/students:read/g)?.length).toBe(2); // the scope and the --add-scope in one error line
    expect(result.stderr).toMatch(/^error: .*plat login --add-scope students:read\n$/);
    const held = await home.run(['call', 'GET', '/api/courses']);
    expect(held.code).toBe(0);
    expect(held.stderr).toBe('');
    const anonymous = await home.run(['call', 'GET', '/api/students', '--anonymous']);
    expect(anonymous.code).toBe(0);
    expect(anonymous.stderr).not.toMatch(/needs the scope/);
  });

  it('names the scope the description lists when the server refuses without naming one, with the profile in the command', async () => {
    const result = await home.login(platform, ['--profile', 'work', '--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect((await home.run(['op', '--profile', 'work'])).code).toBe(0);
    platform.override('/api/students', (_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"forbidden"}');
      return true;
    });
    const refused = await home.run(['call', 'GET', '/api/students', '--profile', 'work']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /warning: The platform's API description says GET \/api\/students needs the scope students:read, which this session lacks\. To add it: plat login --profile work --add-scope students:read\n/,
    );
  });

  it('never fetches the document itself: without a cached one there is no check', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/nope']);
    expect(result.stderr).not.toMatch(/warning/);
    expect(platform.stats.count('GET /openapi.json')).toBe(0);
  });
});

describe('plat discover', () => {
  it('shows endpoints, grants, PKCE methods, registration and the resource, without a session', async () => {
    const result = await home.run(['discover', '--base-url', platform.baseUrl]);
    expect(result.code, result.stderr).toBe(0);
    const base = platform.baseUrl.replace(/[.]/g, '\\.');
    for (const [label, value] of [
      ['Resource', base],
      ['Issuer', base],
      ['Authorization', `${base}/oauth/authorize`],
      ['Token', `${base}/api/oauth/token`],
      ['Registration', `${base}/api/oauth/register`],
      ['UserInfo', `${base}/api/oauth/userinfo`],
      ['Revocation', `${base}/api/oauth/revoke`],
      ['Device authorization', `${base}/api/oauth/device/auth \\(plat login --device\\)`],
      ['Grant types', 'authorization_code refresh_token urn:ietf:params:oauth:grant-type:device_code'],
      ['PKCE methods', 'S256'],
      ['Scopes', '38 \\(plat scopes lists them\\)'],
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^${label}\\s+${value}$`, 'm'));
    }
  });

  it('--json carries the endpoints, the metadata as received, and what was filled from the spec', async () => {
    platform.knobs.metadata = 'missing-endpoints';
    platform.knobs.protectedResourceMetadata = 'missing';
    const result = await home.run(['discover', '--base-url', platform.baseUrl, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      resource: null,
      authorizationServers: [platform.issuer],
      endpoints: { authorization: `${platform.baseUrl}/oauth/authorize`, token: `${platform.baseUrl}/api/oauth/token` },
      filledFromSpec: ['authorization_endpoint', 'token_endpoint'],
      pkceMethods: ['S256'],
      metadata: { protectedResource: null, authorizationServer: { issuer: platform.issuer } },
    });
    const human = await home.run(['discover', '--base-url', platform.baseUrl, '--refresh']);
    expect(human.stdout).toMatch(/^Token\s+\S+\/api\/oauth\/token\s+\(documented path; not in the metadata\)$/m);
    expect(human.stdout).toMatch(/^Resource\s+\(no protected-resource metadata/m);
  });

  it('uses the discovery cache, and --refresh reads the metadata again', async () => {
    const base = ['discover', '--base-url', platform.baseUrl];
    await home.run(base);
    await home.run(base);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(1);
    await home.run([...base, '--refresh']);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(2);
  });

  it('is a usage error without a platform, and a protocol error for HTML metadata', async () => {
    expect((await home.run(['discover'])).code).toBe(2);
    platform.knobs.metadata = 'html';
    const result = await home.run(['discover', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/found no usable sign-in metadata .*not JSON/);
    expectCleanError(result);
  });
});
