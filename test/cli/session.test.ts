import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError, makeHome } from '../helpers/cli.js';
import { startPlatform } from '../platform/index.mjs';
import { useHome, usePlatform } from '../helpers/platform.js';
import { readStoredSession } from '../helpers/state.js';

const platform = usePlatform();
const home = useHome();

async function loggedIn(args: string[] = ['--scope', 'courses:read']) {
  const result = await home.login(platform, args);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

const storedSession = () => readStoredSession(home);

describe('plat whoami', () => {
  it('prints the user for people', async () => {
    await loggedIn(['--scope', 'openid profile email courses:read']);
    const result = await home.run(['whoami']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/User\s+Ada Lovelace <ada@example.test>/);
    expect(result.stdout).toMatch(/Subject\s+user-ada/);
    expect(result.stdout).toContain(platform.baseUrl);
  });

  it('--json prints the UserInfo claims', async () => {
    await loggedIn(['--scope', 'openid profile email']);
    const result = await home.run(['whoami', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ sub: 'user-ada', name: 'Ada Lovelace', email: 'ada@example.test' });
  });

  it('exits 4 with the command to run when not logged in', async () => {
    const result = await home.run(['whoami']);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/Not logged in\. Run: plat login --base-url <url>/);
    expect(result.stdout).toBe('');
  });
});

describe('plat call', () => {
  it('calls anonymously before login, with a note on stderr', async () => {
    const result = await home.run(['call', 'GET', `${platform.baseUrl}/api/courses`, '--base-url', platform.baseUrl]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: true });
    expect(result.stderr).toMatch(/Not logged in: calling anonymously/);
  });

  it('sends the token and streams the body unmodified to stdout', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/courses']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    expect(result.stderr).toBe('');
  });

  it('--anonymous sends no token', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/courses', '--anonymous']);
    expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: true });
  });

  it('-f and -F become query parameters on GET', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/echo', '-f', 'q=algebra', '-F', 'limit=5', '-F', 'open=true']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).query).toEqual({ q: 'algebra', limit: '5', open: 'true' });
  });

  it('-f and -F become a typed JSON body on POST, -F @file reads a file', async () => {
    await loggedIn();
    const file = path.join(home.dir, 'bio.txt');
    await writeFile(file, 'from a file');
    const result = await home.run(['call', 'POST', '/api/echo', '-f', 'title=Algebra', '-F', 'seats=30', '-F', 'draft=false', '-F', 'tag=null', '-F', `bio=@${file}`, '-f', 'code=007']);
    expect(result.code, result.stderr).toBe(0);
    const echo = JSON.parse(result.stdout);
    expect(echo.method).toBe('POST');
    expect(echo.headers['content-type']).toBe('application/json');
    expect(JSON.parse(echo.body)).toEqual({ title: 'Algebra', seats: 30, draft: false, tag: null, bio: 'from a file', code: '007' });
  });

  it('--input sends a file, and - sends stdin', async () => {
    await loggedIn();
    const file = path.join(home.dir, 'body.json');
    await writeFile(file, '{"from":"file"}');
    const fromFile = await home.run(['call', 'PUT', '/api/echo', '--input', file]);
    expect(JSON.parse(JSON.parse(fromFile.stdout).body)).toEqual({ from: 'file' });
    const fromStdin = await home.run(['call', 'POST', '/api/echo', '--input', '-', '-H', 'Content-Type: text/plain'], { stdin: 'hello from stdin' });
    const echo = JSON.parse(fromStdin.stdout);
    expect(echo.body).toBe('hello from stdin');
    expect(echo.headers['content-type']).toBe('text/plain');
  });

  it('-H adds headers and -i prints the status line and headers first', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/echo', '-H', 'X-Trace: abc', '-i']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(result.stdout).toMatch(/content-type: application\/json/i);
    const body = result.stdout.slice(result.stdout.indexOf('\n\n') + 2);
    expect(JSON.parse(body).headers['x-trace']).toBe('abc');
  });

  it('prints the body of an HTTP error on stdout, one line on stderr, exit 1', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/status/404']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ status: 404 });
    expect(result.stderr.trim()).toBe('error: HTTP 404 Not Found: GET /api/status/404');
  });

  it('names the missing scope and the step-up command on 403 insufficient_scope (exit 5)', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/analytics']);
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('plat login --add-scope analytics:read');
  });

  it('a 403 naming a scope the session was granted does not suggest the same login again (exit 5)', async () => {
    await loggedIn();
    // The server refuses a scope it granted at sign-in (a role it did not give this account, say).
    platform.override('/api/courses', (_req, res) => {
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="courses:read"' });
      res.end();
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/courses']);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/GET \/api\/courses needs "courses:read", which profile default was granted at sign-in as far as plat was told, but the server refuses it/);
    expect(result.stderr).not.toMatch(/--add-scope/);
    expectCleanError(result);
  });

  it('does not send the token to another origin', async () => {
    await loggedIn();
    const other = await startPlatform();
    try {
      const result = await home.run(['call', 'GET', `${other.baseUrl}/api/echo`]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).authenticated).toBe(false);
      expect(result.stderr).toMatch(/without your token/);
    } finally {
      await other.close();
    }
  });

  it('does not follow a redirect (so the token cannot follow it elsewhere)', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/redirect?to=http://127.0.0.2:1/steal', '-i']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 302/);
    expect(result.stdout).toMatch(/location: http:\/\/127\.0\.0\.2:1\/steal/i);
  });

  it('retries a 503 with Retry-After on an idempotent request', async () => {
    await loggedIn();
    let calls = 0;
    platform.override('/api/flaky', (_req, res) => {
      calls++;
      if (calls < 3) {
        res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/json' });
        res.end('{"busy":true}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/flaky']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true });
    expect(calls).toBe(3);
  });

  it('refreshes once and retries when the API answers 401 invalid_token', async () => {
    await loggedIn();
    let rejected = false;
    platform.override('/api/courses', (_req, res) => {
      if (rejected) return false;
      rejected = true;
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
      res.end('{"error":"invalid_token"}');
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/courses']);
    expect(result.code, result.stderr).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect(JSON.parse(result.stdout).anonymous).toBe(false);
  });

  it('exits 4 when the token is still rejected after a refresh', async () => {
    await loggedIn();
    platform.override('/api/courses', (_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
      res.end('{"error":"invalid_token"}');
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/courses']);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/even after a refresh/);
  });

  it('is a usage error to call a relative path with no platform known', async () => {
    const result = await home.run(['call', 'GET', '/api/courses']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--base-url/);
  });

  it('exits 3 when the API cannot be reached', async () => {
    const result = await home.run(['call', 'GET', 'http://127.0.0.1:1/api/courses']);
    expect(result.code).toBe(3);
    expectCleanError(result);
  });
});

describe('plat token, refresh and expiry', () => {
  it('plat token prints the access token and nothing else', async () => {
    await loggedIn();
    const result = await home.run(['token']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${(await storedSession()).accessToken}\n`);
    expect(result.stderr).toBe('');
  });

  it('PLAT_TOKEN is used instead of the stored session', async () => {
    await loggedIn();
    const token = (await storedSession()).accessToken;
    const other = await makeHome({ PLAT_TOKEN: token, PLAT_BASE_URL: platform.baseUrl });
    try {
      const result = await other.run(['call', 'GET', '/api/courses']);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).anonymous).toBe(false);
      expect((await other.run(['token'])).stdout).toBe(`${token}\n`);
    } finally {
      await other.cleanup();
    }
  });

  it('plat refresh rotates now, and the old refresh token is dead', async () => {
    await loggedIn();
    const before = await storedSession();
    const result = await home.run(['refresh', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(new Date(JSON.parse(result.stdout).expiresAt).getTime()).toBeGreaterThan(Date.now());
    const after = await storedSession();
    expect(after.refreshToken).not.toBe(before.refreshToken);
    const replay = await fetch(`${platform.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: before.refreshToken, client_id: JSON.parse(await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8')).client.clientId }),
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('a rejected refresh token ends the session with exit 4 and "run plat login"', async () => {
    await loggedIn();
    platform.override('/api/oauth/token', (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":"invalid_grant","error_description":"grant request is invalid"}');
      return true;
    });
    const result = await home.run(['refresh']);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/run plat login/i);
    expect((await home.run(['token'])).code).toBe(4);
  });

  it('a network failure during refresh keeps the session', async () => {
    await loggedIn();
    platform.override('/api/oauth/token', (req) => {
      req.socket.destroy();
      return true;
    });
    const result = await home.run(['refresh']);
    expect(result.code).toBe(3);
    platform.clearOverrides();
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
  });
});

describe('plat status and logout', () => {
  it('status --json lists the profile with base URL, issuer, user, scopes, expiry and store', async () => {
    await loggedIn(['--scope', 'openid profile courses:read']);
    const result = await home.run(['status', '--json']);
    expect(result.code).toBe(0);
    const [profile] = JSON.parse(result.stdout).profiles;
    expect(profile).toMatchObject({
      profile: 'default',
      current: true,
      loggedIn: true,
      baseUrl: platform.baseUrl,
      issuer: platform.issuer,
      user: { sub: 'user-ada', name: 'Ada Lovelace' },
      scopes: ['openid', 'profile', 'email', 'courses:read'],
      tokenStore: 'file',
    });
    expect(Date.parse(profile.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('status --check asks the server whether the token works', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    await loggedIn();
    const result = await home.run(['status', '--check', '--json']);
    expect(JSON.parse(result.stdout).profiles[0].works).toBe(true);
  });

  it('logout revokes at the server: the old token stops working, the profile keeps its registration', async () => {
    await loggedIn();
    const { accessToken } = await storedSession();
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/revoked/);
    expect(platform.stats.count('POST /api/oauth/revoke')).toBe(2);
    const api = await fetch(`${platform.baseUrl}/api/courses`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(api.status).toBe(401);
    const profile = JSON.parse(await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8'));
    expect(profile.loggedIn).toBe(false);
    expect(profile.client.clientId).toBeTruthy();
    const anon = await home.run(['call', 'GET', '/api/courses']);
    expect(JSON.parse(anon.stdout).anonymous).toBe(true);
  });

  it('logout when logged out is a success that says so', async () => {
    const result = await home.run(['logout']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Not logged in; nothing to do/);
  });

  it('a failed revocation is reported and the tokens are still removed', async () => {
    await loggedIn();
    platform.override('/api/oauth/revoke', (_req, res) => {
      res.writeHead(503);
      res.end();
      return true;
    });
    const result = await home.run(['logout']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Could not revoke/);
    expect((await home.run(['token'])).code).toBe(4);
  });

  it('logout --all logs out of every profile', async () => {
    await loggedIn();
    expect((await home.login(platform, ['--profile', 'second'])).code).toBe(0);
    const result = await home.run(['logout', '--all', '--no-revoke', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).map((r: { profile: string }) => r.profile).sort()).toEqual(['default', 'second']);
    expect((await home.run(['token'])).code).toBe(4);
    expect((await home.run(['token', '--profile', 'second'])).code).toBe(4);
  });
});

describe('--verbose', () => {
  it('traces HTTP on stderr with every secret redacted', async () => {
    const login = await home.login(platform, ['--verbose']);
    expect(login.code).toBe(0);
    const call = await home.run(['call', 'GET', '/api/courses', '--verbose']);
    const refresh = await home.run(['refresh', '--verbose']);
    const logout = await home.run(['logout', '--verbose']);
    const all = [login, call, refresh, logout].map((r) => r.stderr).join('\n');
    expect(all).toMatch(/> GET .*\/api\/courses/);
    expect(all).toMatch(/authorization: Bearer \[redacted\]/);
    const secrets = platform.secrets();
    expect(secrets.length).toBeGreaterThan(3);
    for (const secret of secrets) expect(all).not.toContain(secret);
  });
});
