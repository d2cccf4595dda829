/**
 * The security model, proven against servers that want plat's secrets: a second origin (the hostile server, which
 * logs every request with its Authorization header and body) next to the reference platform. Each case reads
 * what was sent where from the servers' own records, and checks the exit code, the sentence and the disk.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run as call } from '../../src/commands/call/call.js';
import { run as logout } from '../../src/commands/auth/logout.js';
import { run as whoami } from '../../src/commands/auth/whoami.js';
import { DISCOVERY_TTL_MS } from '../../src/session/discovery/discovery-cache.js';
import { startPlatform, type Platform } from '../platform/index.mjs';
import { approving, signIn } from '../helpers/consent.js';
import { expectPlatError, useTestContexts, type TestContext } from '../helpers/context.js';
import { readState, readStoredSession, sessionBytes } from '../helpers/state.js';
import { expectFailure, expectSuccess } from './helpers.js';
import { sendJson, startHostile, type Hostile } from './hostile.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();
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

const ESCAPES = /[\u001b\u009b\u0007\r]/;

describe('a session belongs to one origin', () => {
  beforeEach(async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    hostile.on('/api/', sendJson(200, { hostile: true }));
  });

  it.each([
    ['--base-url', (h: string) => ({ args: ['--base-url', h], env: {} })],
    ['PLAT_BASE_URL', (h: string) => ({ args: [], env: { PLAT_BASE_URL: h } })],
  ])('plat call with %s naming another origin goes out without the token, and says why', async (_how, named) => {
    const { args, env } = named(hostile.baseUrl);
    const result = await home.run(['call', 'GET', '/api/courses', ...args], { env });
    expectSuccess(result);
    expect(JSON.parse(result.stdout)).toEqual({ hostile: true });
    expect(result.stderr).toContain(`Profile default is signed in to ${platform.baseUrl}, not ${hostile.baseUrl}: calling ${hostile.baseUrl} anonymously.`);
    expect(hostile.log).toHaveLength(1);
    expect(hostile.log[0]!.authorization).toBeUndefined();
    expect(hostile.leaks(platform.secrets())).toEqual([]);
  });

  it.each([['token'], ['whoami'], ['refresh']])('plat %s --base-url <other origin> exits 4 with the ways out, sending nothing', async (command) => {
    const before = await sessionBytes(home);
    const result = await home.run([command, '--base-url', hostile.baseUrl]);
    expectFailure(result, 4, new RegExp(`Profile default is signed in to ${platform.baseUrl.replace(/[.]/g, '\\.')}, not to ${hostile.baseUrl.replace(/[.]/g, '\\.')}`));
    // The login it suggests makes a profile of its own there: signing default in there would move it (issue 24).
    expect(result.stderr).toContain(`sign in to it under a profile of its own: plat login --profile host-${new URL(hostile.baseUrl).port} --base-url ${hostile.baseUrl}`);
    expect(hostile.log).toEqual([]);
    expect(await sessionBytes(home)).toEqual(before);
  });

  it('a profile with another name carries its name into the suggested commands', async () => {
    await signIn(home, platform, ['--profile', 'district']);
    const result = await home.run(['token', '--profile', 'district', '--base-url', hostile.baseUrl]);
    expectFailure(result, 4, /Profile district is signed in to/);
    expect(result.stderr).toContain(`plat login --profile host-${new URL(hostile.baseUrl).port} --base-url ${hostile.baseUrl}`);
    expect(result.stderr).not.toContain('plat login --profile district --base-url');
  });

  it('an exported PLAT_BASE_URL never moves a profile: login exits 2 and leaves it exactly as it was', async () => {
    const before = await sessionBytes(home);
    const result = await home.run(['login', '--no-browser'], { env: { PLAT_BASE_URL: hostile.baseUrl } });
    expectFailure(result, 2, /Profile default belongs to .*, but PLAT_BASE_URL names/);
    expect(result.stderr).toContain(`plat login --base-url ${hostile.baseUrl}`);
    expect(await sessionBytes(home)).toEqual(before);
    expect(hostile.log).toEqual([]);
  });

  it('an explicit plat login --base-url moves the profile: the new session is stored, then the old one revoked at its own issuer', async () => {
    const other = await startPlatform();
    try {
      const before = (await readState(home)).session!;
      const { result } = await signIn(home, other, ['--scope', 'courses:read']);
      expect(result.stderr).toContain(`Profile default is signed in to ${platform.baseUrl}; signing in to ${other.baseUrl} replaces that session, which plat then revokes.`);
      expect(platform.stats.count('revoke:refresh_token')).toBe(1);
      expect(platform.stats.count('revoke:access_token')).toBe(1);
      expect(other.stats.count('revoke:refresh_token') + other.stats.count('revoke:unknown')).toBe(0);
      const after = await readState(home);
      expect(after.profile).toMatchObject({ baseUrl: other.baseUrl, issuer: other.baseUrl, loggedIn: true });
      expect(after.session!.accessToken).not.toBe(before.accessToken);
      // The old platform's tokens went back to it alone.
      expect(hostile.leaks([before.accessToken, before.refreshToken])).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('an absolute URL on another origin is called without the token', async () => {
    const result = await home.run(['call', 'GET', `${hostile.baseUrl}/api/x`]);
    expectSuccess(result);
    expect(hostile.log[0]!.authorization).toBeUndefined();
    expect(result.stderr).toContain('is not the platform\'s origin: calling it without your token');
  });
});

describe('a session belongs to one issuer', () => {
  // In-process (testContext): the session ages by moving plat's clock past the access token's expiry and the
  // discovery cache's hour, where a spawned plat needed a two-second token and a real wait. The commands' own run
  // functions are called; what main.ts makes of their PlatError (the "error:" line, the exit code) is the contract,
  // which the cases above check through the binary.
  const open = useTestContexts(home);

  /** The platform now names the hostile server as its authorization server, and the hostile server agrees. */
  function platformMovesToHostile() {
    hostile.on('/', sendJson(200, { access_token: 'stolen', token_type: 'Bearer' }));
    hostile.on('/.well-known/oauth-authorization-server', (_req, res) => {
      sendJson(200, {
        issuer: hostile.baseUrl,
        authorization_endpoint: `${hostile.baseUrl}/authorize`,
        token_endpoint: `${hostile.baseUrl}/token`,
        revocation_endpoint: `${hostile.baseUrl}/revoke`,
        userinfo_endpoint: `${hostile.baseUrl}/userinfo`,
        code_challenge_methods_supported: ['S256'],
      })(_req, res, '');
    });
    platform.override('/.well-known/oauth-protected-resource', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource: platform.baseUrl, authorization_servers: [hostile.baseUrl] }));
      return true;
    });
  }

  /** A context whose clock is past the access token's expiry and the discovery cache's hour: the next use refreshes, and discovers anew. */
  async function later(): Promise<TestContext> {
    const t = open();
    const { expiresAt } = await readStoredSession(home);
    t.clock.advance(Math.max(expiresAt - t.clock.now(), DISCOVERY_TTL_MS) + 60_000);
    return t;
  }

  beforeEach(async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platformMovesToHostile();
  });

  it('a refresh that finds another authorization server sends it no token: exit 4, the session kept', async () => {
    const t = await later();
    await expectPlatError(t, () => call(t.ctx, 'GET', '/api/courses', {}), 4, /now names another authorization server \(.* → .*\), so plat sent it no token\. Run plat login to trust it\./);
    expect(hostile.leaks(platform.secrets())).toEqual([]);
    expect(hostile.log.every((r) => r.method === 'GET' && r.authorization === undefined)).toBe(true);
    expect((await readState(home)).profile?.loggedIn).toBe(true);
  });

  it('logout does not revoke at the new server, and still forgets the tokens here', async () => {
    const t = await later();
    await logout(t.ctx, { revoke: true }); // what commander passes for a bare `plat logout`
    expect(t.stderr()).toMatch(/now names another authorization server/);
    expect(hostile.leaks(platform.secrets())).toEqual([]);
    expect((await readState(home)).session).toBeUndefined();
  });

  it('whoami sends the token to no other UserInfo', async () => {
    const t = await later();
    await expectPlatError(t, () => whoami(t.ctx), 4, /now names another authorization server/);
    expect(hostile.leaks(platform.secrets())).toEqual([]);
  });
});

describe('no endpoint is guessed for an authorization server on another origin', () => {
  /** The hostile server is the API; its protected-resource metadata names the platform as authorization server. */
  beforeEach(() => {
    hostile.on('/.well-known/oauth-protected-resource', sendJson(200, { resource: hostile.baseUrl, authorization_servers: [platform.baseUrl] }));
    platform.knobs.extraResources = [hostile.baseUrl];
  });

  const login = (args: string[] = []) => signIn(home, { ...platform, baseUrl: hostile.baseUrl } as Platform, args);

  it('a server without token_endpoint is refused before anything opens or registers', async () => {
    platform.knobs.metadataOverrides = { token_endpoint: null };
    const result = await home.run(['login', '--no-browser', '--base-url', hostile.baseUrl]);
    expectFailure(result, 1, /offers no token_endpoint/);
    expect(result.stderr).not.toMatch(/oauth\/authorize\?/);
    expect(platform.stats.count('register')).toBe(0);
    expect(hostile.log.map((r) => r.method)).toEqual(['GET']);
  });

  it('tokens are bound to the API (RFC 8707 resource by default); logout without revocation forgets them and says so', async () => {
    platform.knobs.metadataOverrides = { revocation_endpoint: null, userinfo_endpoint: null };
    await login(['--scope', 'openid profile courses:read']);
    expect((await readState(home)).profile).toMatchObject({ resource: hostile.baseUrl, issuer: platform.baseUrl });
    const who = await home.run(['whoami']);
    expectSuccess(who);
    expect(who.stdout).toMatch(/User\s+Ada Lovelace/);
    const out = await home.run(['logout']);
    expectSuccess(out);
    expect(out.stdout).toMatch(/the server offers no revocation, so the tokens were only removed from this machine/);
    expect(out.stdout).not.toMatch(/revoked at the server/);
    expect(Object.keys(platform.stats.keys()).filter((k) => k.includes('revoke'))).toEqual([]);
    expect(hostile.leaks(platform.secrets())).toEqual([]);
    expect((await readState(home)).session).toBeUndefined();
  });
});

describe('nothing a server sends drives the terminal or the shell', () => {
  it('a user name with escape sequences is stored and printed without them (login, whoami, status)', async () => {
    platform.override('/api/oauth/userinfo', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sub: 'user-ada', name: 'Ada\u001b]0;owned\u0007\u001b[2J Lovelace\u009b31m', email: 'ada@example.com\r' }));
      return true;
    });
    const { result: login } = await signIn(home, platform, ['--scope', 'openid profile email']);
    expect(login.stdout + login.stderr).not.toMatch(ESCAPES);
    expect(JSON.stringify((await readState(home)).profile)).not.toMatch(/\\u001b|\\u009b|\\u0007|\\r/);
    for (const args of [['whoami'], ['status']]) {
      const result = await home.run(args);
      expectSuccess(result);
      expect(result.stdout + result.stderr).not.toMatch(ESCAPES);
    }
  });

  it('reason phrases and headers under -i and --verbose are sanitised; the body stays byte-exact', async () => {
    platform.override('/api/evil', (_req, res) => {
      res.writeHead(500, 'Bad\u009b2J', { 'x-evil': 'a\u009b31mb', 'content-type': 'text/plain' });
      res.end('body\u001b[2J');
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/evil', '-i', '--verbose', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stdout.endsWith('body\u001b[2J')).toBe(true);
    const head = result.stdout.slice(0, result.stdout.length - 'body\u001b[2J'.length);
    expect(head).toContain('HTTP/1.1 500 Bad 2J');
    expect(head).not.toMatch(ESCAPES);
    expect(result.stderr).not.toMatch(ESCAPES);
    expect(result.stderr).toMatch(/error: HTTP 500 Bad 2J: GET \/api\/evil/);
  });

  it('scope names, metadata values and OpenAPI paths are printed without control characters', async () => {
    platform.knobs.metadataOverrides = {
      scopes_supported: ['openid', 'courses:read\u001b[2J', 'evil\u009b31m'],
      introspection_endpoint: `${platform.baseUrl}/\u001b]0;owned\u0007`,
    };
    platform.override('/openapi.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ openapi: '3.0.3', info: { title: 'T\u001b[2J', version: '1' }, paths: { '/api/x\u001b[2J': { get: { summary: 'S\u009b31m' } } } }));
      return true;
    });
    for (const args of [['scopes'], ['discover'], ['op']]) {
      const result = await home.run([...args, '--base-url', platform.baseUrl]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout + result.stderr, args.join(' ')).not.toMatch(ESCAPES);
    }
  });

  it('a hostile scope in a 403 becomes a quoted hint: pasted into bash, it runs nothing else', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const scope = 'courses:write;touch${IFS}pwned;#';
    platform.override('/api/step-up', (_req, res) => {
      res.writeHead(403, { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` });
      res.end();
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/step-up']);
    expectFailure(result, 5, /needs the scope/);
    const hint = /Run: (plat login .*)$/m.exec(result.stderr)![1]!;
    const dir = path.join(home.dir, 'paste');
    await mkdir(dir);
    // `plat` stands in as a function that prints its arguments: whatever else the line runs would show or leave a file.
    const out = execFileSync('bash', ['-c', `plat() { printf '<%s>' "$@"; }; ${hint}`], { cwd: dir, encoding: 'utf8' });
    expect(out).toBe(`<login><--add-scope><${scope}>`);
    expect(execFileSync('ls', ['-A', dir], { encoding: 'utf8' })).toBe('');
  });

  it('a 403 naming a scope RFC 6749 does not allow, or none: exit 5, pointing to plat scopes, and no command built from it', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    let challenge = 'Bearer error="insufficient_scope", scope="courses:\\"write\\""';
    platform.override('/api/step-up', (_req, res) => {
      res.writeHead(403, { 'www-authenticate': challenge });
      res.end();
      return true;
    });
    const invalid = await home.run(['call', 'GET', '/api/step-up']);
    expectFailure(invalid, 5, /^error: GET \/api\/step-up needs a scope this session does not have \(the server named "courses:"write"", which is not a valid scope name\)\. See plat scopes, then plat login --add-scope <scope>\.$/m);
    challenge = 'Bearer error="insufficient_scope"';
    const unnamed = await home.run(['call', 'GET', '/api/step-up']);
    expectFailure(unnamed, 5, /^error: GET \/api\/step-up needs a scope this session does not have\. See plat scopes, then plat login --add-scope <scope>\.$/m);
  });

  it('a token with characters RFC 6749 does not allow is refused at login (exit 1), nothing stored', async () => {
    platform.knobs.tokenResponse = 'control-char-access-token';
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: approving(platform, { firstOnly: true }).onStderr });
    expectFailure(result, 1, /access_token with characters a token cannot contain \(RFC 6749 Appendix A/);
    expect((await readState(home)).session).toBeUndefined();
  });
});

describe('every wait has an end; -F takes regular files only', () => {
  it('-F @fifo and -F @/dev/zero are usage errors at once', async () => {
    const fifo = path.join(home.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const file of [fifo, '/dev/zero']) {
      const result = await home.run(['call', 'POST', '/api/echo', '--base-url', platform.baseUrl, '-F', `data=@${file}`], { timeoutMs: scaled(10_000) });
      expectFailure(result, 2, /not a regular file/);
    }
  });

  it('a metadata server that trickles a byte a second ends with exit 3 at the protocol deadline', async () => {
    hostile.on('/.well-known/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 1000);
      res.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const result = await home.run(['discover', '--base-url', hostile.baseUrl], { timeoutMs: scaled(60_000) });
    expectFailure(result, 3, /timed out/);
    expect(Date.now() - started).toBeLessThan(45_000);
  }, scaled(60_000));
});

describe('the machine: other users, loose modes', () => {
  it('a config dir others can write is refused with the chmod that fixes it', async () => {
    await signIn(home, platform);
    await chmod(home.configDir, 0o777);
    const result = await home.run(['status']);
    expectFailure(result, 1, /can be written by group and others, so plat will not trust what it holds\. Run: chmod 700 /);
    await chmod(home.configDir, 0o700);
    expectSuccess(await home.run(['status']));
  });

  it.runIf(process.getuid?.() === 0)('a profile file owned by another user is refused (checked as root, who can make one)', async () => {
    await signIn(home, platform);
    const file = path.join(home.configDir, 'profiles', 'default.json');
    execFileSync('chown', ['65534', file]);
    const result = await home.run(['call', 'GET', '/api/courses']);
    expectFailure(result, 1, /belongs to another user \(uid 65534\), so plat will not trust what it holds/);
  });

  it.runIf(process.getuid?.() === 0)('http:// to a name that resolves off loopback is refused before any request (checked in a mount namespace whose /etc/hosts says so)', async () => {
    const hosts = path.join(home.dir, 'hosts');
    // 0.0.0.0 is not loopback, yet stays on this machine should the check ever fail.
    await writeFile(hosts, `0.0.0.0 school.localhost\n127.0.0.1 localhost\n`);
    const port = new URL(hostile.baseUrl).port;
    const bin = path.resolve('bin/plat.js');
    const script = `mount --bind "$1" /etc/hosts && exec "$2" "$3" call GET "http://school.localhost:$4/api/x"`;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', hosts, process.execPath, bin, port], { env: home.env });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c));
        child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.code, result.stderr).toBe(3);
    // What plat refused and why, not "could not reach", which would send the person looking for a network fault.
    expect(result.stderr).toContain(`plat refused to send the request to http://school.localhost:${port}: school.localhost resolves to 0.0.0.0, not a loopback address`);
    expect(result.stderr).not.toMatch(/could not reach/i);
    expect(hostile.log).toEqual([]);
  });

  it('new directories are created 0700', async () => {
    await signIn(home, platform);
    const { statSync } = await import('node:fs');
    for (const dir of ['', 'profiles', 'tokens']) expect(statSync(path.join(home.configDir, dir)).mode & 0o777).toBe(0o700);
    await writeFile(path.join(home.dir, 'unused'), '');
    await readFile(path.join(home.dir, 'unused'));
  });
});
