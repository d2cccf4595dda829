/**
 * The network misbehaving on the OAuth endpoints and the API: a connection reset in the middle of a body, headers
 * or bodies far beyond what plat reads (OAuth bodies are bounded to 1 MiB), slow answers past --timeout, and
 * redirects to another origin (nothing follows them, least of all the token).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Home } from '../helpers/cli.js';
import { approving, signIn } from '../helpers/consent.js';
import { listFiles, readState, sessionBytes } from '../helpers/state.js';
import { expectConsistent, expectFailure, expectSuccess } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();
/** Another origin on loopback that records every request: what a redirect would lead to. */
let elsewhere: Server;
let seenElsewhere: Array<{ url: string; authorization?: string }> = [];
let elsewhereUrl: string;

beforeAll(async () => {
  elsewhere = createServer((req, res) => {
    seenElsewhere.push({ url: req.url ?? '', authorization: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"stolen":true}');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => elsewhere.close(resolve));
});
beforeEach(() => {
  seenElsewhere = [];
});

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Headers and the start of a JSON body, then the connection is destroyed. */
const resetMidBody: Handler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4000' });
  res.write('{"issuer":"x","access_token":"partial');
  setTimeout(() => req.socket.destroy(), 30);
  return true;
};
/** 100 kB of one header: past Node's 64 kB limit plat sets. */
const hugeHeaders: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-padding': 'p'.repeat(100_000) });
  res.end('{}');
  return true;
};
/** 2 MiB of JSON, announced with content-length or streamed without it. */
const hugeBody = (declared: boolean): Handler => (_req, res) => {
  const body = `{"padding":"${'p'.repeat(2 * 1024 * 1024)}"}`;
  res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': String(body.length) } : {}) });
  res.end(body);
  return true;
};
const redirectElsewhere = (status: number): Handler => (_req, res) => {
  res.writeHead(status, { location: `${elsewhereUrl}/steal` });
  res.end();
  return true;
};

const LOGIN_ENDPOINTS: Array<[string, string]> = [
  ['the registration endpoint', '/api/oauth/register'],
  ['the token endpoint', '/api/oauth/token'],
];
/** A metadata address that redirects is passed over for the next one (the contract's discovery line). */
const METADATA_ADDRESSES: Array<[string, string]> = [
  ['the protected-resource metadata', '/.well-known/oauth-protected-resource'],
  ['the authorization server metadata', '/.well-known/oauth-authorization-server'],
];

async function login(h: Home = home) {
  const approval = approving(platform, { firstOnly: true });
  return h.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: approval.onStderr });
}

async function expectNoSession(h: Home = home) {
  expect(await listFiles(`${h.configDir}/tokens`)).toEqual([]);
  expect((await readState(h)).profile?.loggedIn ?? false).toBe(false);
}

describe('a connection reset in the middle of a body', () => {
  it.each(LOGIN_ENDPOINTS)('from %s during login: exit 3, a sentence, nothing stored', async (_what, path) => {
    platform.override(path, resetMidBody);
    const result = await login();
    expectFailure(result, 3, /(broke off before it was complete|connection was reset)/);
    await expectNoSession();
  });

  it('from UserInfo during login: signed in anyway, with a warning (the user comes from the ID token)', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    platform.override('/api/oauth/userinfo', resetMidBody);
    const result = await login();
    expectSuccess(result);
    expect(result.stderr).toMatch(/warning: Signed in, but could not read your user information: .*(broke off|reset)/);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('from UserInfo for whoami: exit 3, the session kept', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    await signIn(home, platform);
    platform.override('/api/oauth/userinfo', resetMidBody);
    expectFailure(await home.run(['whoami']), 3, /(broke off before it was complete|connection was reset)/);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('from the token endpoint during refresh: exit 3, the session untouched and usable', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const before = await sessionBytes(home);
    platform.override('/api/oauth/token', resetMidBody);
    expectFailure(await home.run(['refresh']), 3, /(broke off before it was complete|connection was reset)/);
    expect(await sessionBytes(home)).toEqual(before);
    platform.clearOverrides();
    expectSuccess(await home.run(['call', 'GET', '/api/courses']));
    expectSuccess(await home.run(['refresh']));
  });

  it('from the revocation endpoint during logout (reset before an answer): logged out anyway, with a warning', async () => {
    await signIn(home, platform);
    platform.override('/api/oauth/revoke', (req) => (req.socket.destroy(), true));
    const result = await home.run(['logout']);
    expectSuccess(result);
    expect(result.stderr).toMatch(/warning: Could not revoke/);
    expect(await expectConsistent(home)).toBe('logged-out');
  });

  it('from the API during plat call: exit 3 after the part that arrived (a POST is not retried)', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    let calls = 0;
    platform.override('/api/broken', (req, res) => {
      calls++;
      return resetMidBody(req, res);
    });
    const result = await home.run(['call', 'POST', '/api/broken', '-f', 'a=1']);
    expectFailure(result, 3, /broke off before it was complete/, { stdout: true });
    expect(result.stdout).toBe('{"issuer":"x","access_token":"partial');
    expect(calls).toBe(1);
    expect(await expectConsistent(home)).toBe('logged-in');
  });
});

describe('headers beyond what plat reads (64 kB)', () => {
  it.each(LOGIN_ENDPOINTS)('from %s during login: exit 3, nothing stored', async (_what, path) => {
    platform.override(path, hugeHeaders);
    expectFailure(await login(), 3, /sent response headers that are too large/);
    await expectNoSession();
  });

  it('from the API: exit 3, the session kept', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.override('/api/courses', hugeHeaders);
    expectFailure(await home.run(['call', 'GET', '/api/courses']), 3, /sent response headers that are too large/);
    expect(await expectConsistent(home)).toBe('logged-in');
  });
});

describe('OAuth bodies beyond 1 MiB', () => {
  for (const declared of [true, false]) {
    const how = declared ? 'announced by content-length' : 'streamed without content-length';
    it.each(LOGIN_ENDPOINTS)(`from %s, ${how}: exit 1, nothing stored`, async (_what, path) => {
      platform.override(path, hugeBody(declared));
      expectFailure(await login(), 1, /sent more than 1048576 bytes where a small document was expected/);
      await expectNoSession();
    });
  }

  it('from the token endpoint during refresh: exit 1, the session untouched', async () => {
    await signIn(home, platform);
    const before = await sessionBytes(home);
    platform.override('/api/oauth/token', hugeBody(false));
    expectFailure(await home.run(['refresh']), 1, /sent more than 1048576 bytes/);
    expect(await sessionBytes(home)).toEqual(before);
  });

  it('from UserInfo for whoami: exit 1', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    await signIn(home, platform);
    platform.override('/api/oauth/userinfo', hugeBody(false));
    expectFailure(await home.run(['whoami']), 1, /more than 1048576 bytes/);
  });

  it('from the revocation endpoint during logout: logged out anyway, with a warning', async () => {
    await signIn(home, platform);
    platform.override('/api/oauth/revoke', hugeBody(true));
    const result = await home.run(['logout']);
    expectSuccess(result);
    expect(result.stderr).toMatch(/warning: Could not revoke .*more than 1048576 bytes/);
    expect(await expectConsistent(home)).toBe('logged-out');
  });

  it('an API body is not an OAuth document: 2 MiB stream through plat call unharmed', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.override('/api/big', hugeBody(false));
    const result = await home.run(['call', 'GET', '/api/big']);
    expectSuccess(result);
    expect(result.stdout.length).toBe(2 * 1024 * 1024 + 14);
  });
});

describe('redirects to another origin', () => {
  it.each([301, 302, 303, 307, 308])('HTTP %i from the API: not followed, and the token goes nowhere else', async (status) => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.override('/api/moved', redirectElsewhere(status));
    const get = await home.run(['call', 'GET', '/api/moved', '-i']);
    expectSuccess(get);
    expect(get.stdout).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    const post = await home.run(['call', 'POST', '/api/moved', '-f', 'a=1']);
    expectSuccess(post);
    expect(seenElsewhere).toEqual([]);
  });

  it.each(LOGIN_ENDPOINTS)('from %s during login: not followed (exit 1), nothing reaches the other origin', async (_what, path) => {
    platform.override(path, redirectElsewhere(307));
    const result = await login();
    expectFailure(result, 1, /unexpected HTTP 307|HTTP 307/);
    expect(seenElsewhere).toEqual([]);
    await expectNoSession();
  });

  it.each(METADATA_ADDRESSES)('from %s during login: not followed, nothing reaches the other origin, the next address serves the login', async (_what, path) => {
    platform.override(path, redirectElsewhere(307));
    expectSuccess(await login());
    expect(seenElsewhere).toEqual([]);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('from the token endpoint during refresh, and from UserInfo: not followed, the refresh token and the access token stay home', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    await signIn(home, platform);
    platform.override('/api/oauth/token', redirectElsewhere(307));
    expectFailure(await home.run(['refresh']), 1, /HTTP 307/);
    platform.clearOverrides();
    platform.override('/api/oauth/userinfo', redirectElsewhere(302));
    expectFailure(await home.run(['whoami']), 1, /HTTP 302/);
    expect(seenElsewhere).toEqual([]);
    expect(await expectConsistent(home)).toBe('logged-in');
  });
});

describe('slow answers and --timeout', () => {
  it('an API that sends headers and then stalls: --timeout 1 ends it with exit 3 after the part that arrived', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.override('/api/stall', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part;');
      return true; // never ends
    });
    const started = Date.now();
    const result = await home.run(['call', 'GET', '/api/stall', '--timeout', '1']);
    expect(Date.now() - started).toBeLessThan(scaled(8_000));
    expectFailure(result, 3, /timed out|broke off/, { stdout: true });
    expect(result.stdout).toBe('first part;');
  });

  it('an API that never answers a POST: --timeout 1 ends it with exit 3, not retried', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    let calls = 0;
    platform.override('/api/silent', () => {
      calls++;
      return true;
    });
    expectFailure(await home.run(['call', 'POST', '/api/silent', '-f', 'a=1', '--timeout', '1']), 3, /timed out/);
    expect(calls).toBe(1);
  });
});
