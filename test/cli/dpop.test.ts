/**
 * DPoP-bound sessions (RFC 9449) on the reference platform with DPoP on: every request's proof is checked by the
 * server (oidc-provider at the token and UserInfo endpoints, the platform's API for every API call), a token copied
 * out of the store is worth nothing alone, and the token contract stays truthful.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateKeyPairSync, createHash, randomUUID, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { startPlatProxy } from '../helpers/proxy.js';
import { keyring } from '../helpers/components.js';
import { filesWithText } from '../helpers/state.js';

const platform = usePlatform({ dpop: true });
const home = useHome();

const sessionFile = () => path.join(home.configDir, 'tokens', 'default.json');

async function storedSession(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(sessionFile(), 'utf8'));
}

async function login(args: string[] = []) {
  const result = await home.login(platform, ['--scope', 'courses:read', ...args]);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/** A proof made by a key that is not the session's, as a thief holding only the token could make. */
function foreignProof(method: string, url: string, token: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const u = new URL(url);
  const input = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })}.${b64({
    jti: randomUUID(),
    htm: method,
    htu: `${u.origin}${u.pathname}`,
    iat: Math.floor(Date.now() / 1000),
    ath: createHash('sha256').update(token).digest('base64url'),
  })}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

describe('a DPoP-bound session', () => {
  it('login binds the tokens to a key kept only in the token store; status says DPoP', async () => {
    await login();
    const session = await storedSession();
    expect(session.tokenType).toBe('DPoP');
    expect(session.dpopKey.alg).toBe('ES256');
    expect(typeof session.dpopKey.jwk.d).toBe('string');
    const profileText = await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8').catch(async () => JSON.stringify(await readProfiles()));
    expect(profileText).not.toContain(session.dpopKey.jwk.d);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    const status = await home.run(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const profile = JSON.parse(status.stdout).profiles[0];
    expect(profile.tokenType).toBe('DPoP');
    expect(profile.dpopJkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const human = await home.run(['status']);
    expect(human.stdout).toMatch(/Token type\s+DPoP/);
  });
});

async function readProfiles(): Promise<unknown> {
  const { readdir } = await import('node:fs/promises');
  const out: Record<string, string> = {};
  for (const name of await readdir(home.configDir, { recursive: true })) {
    if (String(name).startsWith('tokens')) continue;
    out[String(name)] = await readFile(path.join(home.configDir, String(name)), 'utf8').catch(() => '');
  }
  return out;
}

/** The API requests (not the OAuth endpoints) the platform saw. */
const apiRequests = () => platform.stats.events.filter((e) => e.path.startsWith('/api/') && !e.path.startsWith('/api/oauth/'));

/** Every proof the API accepted is by the session's key, for its own request, never seen before. */
async function expectProofsByTheSessionKey(count: number) {
  const jkt = (await storedSessionJkt())!;
  expect(platform.dpopProofs.length).toBe(count);
  for (const proof of platform.dpopProofs) {
    expect(proof.jkt).toBe(jkt);
    expect(proof.htu).not.toMatch(/[?#]/);
  }
  expect(new Set(platform.dpopProofs.map((p) => p.jti)).size).toBe(count);
}

async function storedSessionJkt(): Promise<string | undefined> {
  const status = await home.run(['status', '--json']);
  return JSON.parse(status.stdout).profiles[0]?.dpopJkt;
}

function mcpLines(...calls: Array<Record<string, unknown>>): string {
  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    ...calls.map((params, i) => ({ jsonrpc: '2.0', id: i + 2, method: 'tools/call', params })),
  ];
  return `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}

describe('the whole journey on a DPoP platform, every proof checked by the server', () => {
  it('whoami, call, a paginated call, refresh, op, batch, mcp, proxy and logout with revocation', async () => {
    await login();
    platform.stats.reset();
    platform.dpopProofs.length = 0;

    const who = await home.run(['whoami', '--json']);
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ sub: 'user-ada' });

    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    expect(platform.dpopProofs).toHaveLength(1);
    expect(platform.dpopProofs[0]).toMatchObject({ htm: 'GET', htu: `${platform.baseUrl}/api/courses` });

    // Each page its own proof, for its own URL without the query.
    const pages = await home.run(['call', 'GET', '/api/lists/link?per_page=5&total=12', '--paginate', '--jq', '[.[].id] | length']);
    expect(pages.code, pages.stderr).toBe(0);
    expect(platform.dpopProofs.slice(1).map((p) => p.htu)).toEqual(Array(3).fill(`${platform.baseUrl}/api/lists/link`));

    const refresh = await home.run(['refresh']);
    expect(refresh.code, refresh.stderr).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(1);

    const op = await home.run(['op', 'getCourse', '--courseId', 'course-101']);
    expect(op.code, op.stderr).toBe(0);

    const batch = await home.run(['batch', '-'], { stdin: `${JSON.stringify({ method: 'GET', path: '/api/courses' })}\n${JSON.stringify({ op: 'getCourse', params: { courseId: 'course-102' } })}\n` });
    expect(batch.code, batch.stderr).toBe(0);

    const mcp = await home.run(['mcp'], { stdin: mcpLines({ name: 'call', arguments: { method: 'GET', path: '/api/courses' } }) });
    expect(mcp.code, mcp.stderr).toBe(0);
    const answer = mcp.stdout.trim().split('\n').map((line) => JSON.parse(line)).find((a) => a.id === 2);
    expect(answer.result.structuredContent).toMatchObject({ anonymous: false });

    const proxy = await startPlatProxy(home);
    const viaProxy = await fetch(`${proxy.url}api/courses`);
    expect(viaProxy.status).toBe(200);
    expect(await viaProxy.json()).toMatchObject({ anonymous: false });
    await proxy.stop();

    // 1 call + 3 pages + op + 2 batch lines + mcp + proxy, every one with a proof by the session's key.
    await expectProofsByTheSessionKey(9);
    expect(apiRequests().length).toBe(9);

    const logout = await home.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(platform.stats.count('revoke:refresh_token')).toBe(1);
    await expect(readFile(sessionFile(), 'utf8')).rejects.toThrow();
  });

  it('--no-dpop on a DPoP server gives a bearer session that works as before', async () => {
    await login(['--no-dpop']);
    const session = await storedSession();
    expect(session.tokenType).toBe('Bearer');
    expect(session.dpopKey).toBeUndefined();
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ anonymous: false });
    expect(platform.dpopProofs).toHaveLength(0);
    const token = await home.run(['token']);
    expect(token.code).toBe(0);
    expect(token.stdout).toBe(`${session.accessToken}\n`);
  });
});

describe('the device flow on a DPoP platform', () => {
  it('every poll carries a proof, and the session is bound like a browser login', async () => {
    let acted = false;
    const result = await home.run(['login', '--device', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:read'], {
      onStderr: (stderr) => {
        const uri = /^ {2}(http\S+)$/m.exec(stderr)?.[1];
        const code = /enter the code: +(\S+)/.exec(stderr)?.[1];
        if (!uri || !code || acted) return;
        acted = true;
        void platform.approveDevice(uri, { userCode: code });
      },
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await storedSession()).tokenType).toBe('DPoP');
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(platform.dpopProofs).toHaveLength(1);
  });
});

describe('a token copied out of the store is worth nothing alone', () => {
  it('refused as Bearer, refused with a proof from another key, and a proof replayed is refused', async () => {
    await login();
    const { accessToken } = await storedSession();
    const url = `${platform.baseUrl}/api/courses`;
    const asBearer = await fetch(url, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(asBearer.status).toBe(401);
    const foreign = await fetch(url, { headers: { authorization: `DPoP ${accessToken}`, dpop: foreignProof('GET', url, accessToken) } });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get('www-authenticate')).toContain('not the key the token is bound to');

    // plat token --dpop-proof: a program that makes its own requests gets a proof by the session's key, once.
    const made = await home.run(['token', '--json', '--dpop-proof', `GET ${url}`]);
    expect(made.code, made.stderr).toBe(0);
    const { access_token, dpop_proof, token_type } = JSON.parse(made.stdout);
    expect(token_type).toBe('DPoP');
    const first = await fetch(url, { headers: { authorization: `DPoP ${access_token}`, dpop: dpop_proof } });
    expect(first.status).toBe(200);
    const replayed = await fetch(url, { headers: { authorization: `DPoP ${access_token}`, dpop: dpop_proof } });
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toContain('replay');
  });
});

describe('the token contract stays truthful', () => {
  it('plat token exits 2 naming the ways that work; --json holds no token; exec without --proxy starts nothing', async () => {
    await login();
    const bare = await home.run(['token']);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/plat proxy/);
    expect(bare.stderr).toMatch(/plat exec --proxy/);
    expect(bare.stderr).toMatch(/plat login --no-dpop/);
    expectCleanError(bare);

    const json = await home.run(['token', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const described = JSON.parse(json.stdout);
    expect(described).toMatchObject({ token_type: 'DPoP', access_token: null, dpop_jkt: await storedSessionJkt() });
    const { accessToken } = await storedSession();
    expect(json.stdout).not.toContain(accessToken);

    const bound = await home.run(['token', '--dpop-bound']);
    expect(bound.stdout).toBe(`${accessToken}\n`);

    const marker = path.join(home.dir, 'started');
    const exec = await home.run(['exec', '--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`]);
    expect(exec.code).toBe(2);
    expect(exec.stderr).toBe(bare.stderr);
    await expect(readFile(marker, 'utf8')).rejects.toThrow();

    const viaProxy = await home.run(['exec', '--proxy', '--', process.execPath, '-e', 'fetch(process.env.PLAT_PROXY_URL + "api/courses").then(async (r) => process.stdout.write(String(r.status) + " " + (await r.json()).anonymous))']);
    expect(viaProxy.code, viaProxy.stderr).toBe(0);
    expect(viaProxy.stdout).toBe('200 false');
  });

  it('a reflecting endpoint behind plat proxy hands out a token the program cannot use', async () => {
    await login();
    platform.override('/api/reflect', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ authorization: req.headers.authorization, dpop: req.headers.dpop }));
      return true;
    });
    const proxy = await startPlatProxy(home);
    const reflected = (await (await fetch(`${proxy.url}api/reflect`)).json()) as { authorization?: string; dpop?: string };
    await proxy.stop();
    expect(reflected.authorization).toMatch(/^DPoP /);
    const leaked = reflected.authorization!.slice('DPoP '.length);
    const url = `${platform.baseUrl}/api/courses`;
    expect((await fetch(url, { headers: { authorization: `Bearer ${leaked}` } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `DPoP ${leaked}`, dpop: reflected.dpop! } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `DPoP ${leaked}`, dpop: foreignProof('GET', url, leaked) } })).status).toBe(401);
  });
});

describe('nonces (RFC 9449 §8, §9)', () => {
  it('the token endpoint and the API ask for their nonce: each is answered once, and the call succeeds', async () => {
    platform.knobs.dpopNonce = 'required';
    await login();
    // oidc-provider refused the first code exchange for want of its nonce (400 use_dpop_nonce), and took the second.
    expect(platform.stats.count('token:authorization_code')).toBe(2);
    platform.stats.reset();
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(apiRequests().length).toBe(2);
    expect(platform.dpopProofs).toHaveLength(1);
    expect(platform.dpopProofs[0]!.nonce).toEqual(expect.any(String));
    const refresh = await home.run(['refresh']);
    expect(refresh.code, refresh.stderr).toBe(0);
    // oidc-provider's UserInfo asks for its nonce too: answered once, and whoami answers from UserInfo.
    const who = await home.run(['whoami', '--json']);
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({ sub: 'user-ada' });
    expect(who.stderr).not.toMatch(/ID token/);
  });

  it('an API that asks for a new nonce forever gets one retry, then a clear error', async () => {
    await login();
    platform.knobs.dpopNonce = 'always-new';
    platform.stats.reset();
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code).toBe(1);
    expect(apiRequests().length).toBe(2);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
    expect(call.stderr).toMatch(/refused GET \/api\/courses for want of its DPoP nonce \(use_dpop_nonce\), after plat sent the request once more/);
    expectCleanError(call);
  });

  it('a token endpoint that asks for a new nonce forever gets one retry, then a clear error; the session is kept', async () => {
    await login();
    let asked = 0;
    platform.override('/api/oauth/token', (req, res) => {
      req.resume();
      asked += 1;
      res.writeHead(400, { 'content-type': 'application/json', 'dpop-nonce': `nonce-${asked}`, 'cache-control': 'no-store' });
      res.end(JSON.stringify({ error: 'use_dpop_nonce', error_description: 'Authorization server requires nonce in DPoP proof' }));
      return true;
    });
    const refresh = await home.run(['refresh']);
    expect(refresh.code).toBe(1);
    expect(asked).toBe(2);
    expect(refresh.stderr).toMatch(/asked for a new DPoP nonce \(use_dpop_nonce\) again after plat sent the one it gave/);
    expectCleanError(refresh);
    platform.clearOverrides();
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
  });

  it('a token endpoint that refuses the proof for its time: the error says the clock is likely wrong', async () => {
    await login();
    platform.override('/api/oauth/token', (req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ error: 'invalid_dpop_proof', error_description: 'DPoP proof iat is not recent enough' }));
      return true;
    });
    const refresh = await home.run(['refresh']);
    expect(refresh.code).toBe(4);
    expect(refresh.stderr).toMatch(/refused plat's DPoP proof for its time .* clock is probably wrong/);
    expectCleanError(refresh);
  });

  it("a proof refused for its time says the clock is likely wrong", async () => {
    await login();
    platform.knobs.dpopClockOffset = 600;
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code).toBe(4);
    expect(call.stderr).toMatch(/clock is probably wrong/);
    expectCleanError(call);
  });
});

describe('the key is handled like a refresh token', () => {
  it('a key deleted from the store ends the session (exit 4 naming plat login), never a bearer request', async () => {
    await login();
    const session = await storedSession();
    delete session.dpopKey;
    await writeFile(sessionFile(), JSON.stringify(session), { mode: 0o600 });
    platform.stats.reset();
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code).toBe(4);
    expect(call.stderr).toMatch(/DPoP key .* is missing/);
    expect(call.stderr).toMatch(/plat login/);
    expect(apiRequests()).toHaveLength(0);
    const again = await home.run(['call', 'GET', '/api/courses']);
    expect(again.code).toBe(4);
    expect(apiRequests()).toHaveLength(0);
  });

  it('a new login makes a new key; the key never reaches output, even --verbose', async () => {
    await login();
    const first = await storedSession();
    const verbose = await home.run(['call', 'GET', '/api/courses', '--verbose']);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stderr + verbose.stdout).not.toContain(first.dpopKey.jwk.d);
    expect(verbose.stderr).not.toContain(first.accessToken);
    await login();
    const second = await storedSession();
    expect(second.dpopKey.jwk.d).not.toBe(first.dpopKey.jwk.d);
  });
});

describe.skipIf(keyring.skip)(keyring.title('the key moves with the session'), () => {
  it('a session moved from the 0600 file to the keychain takes its key along, and no file keeps it', async () => {
    keyring.require();
    await login();
    const { dpopKey } = await storedSession();
    const jkt = await storedSessionJkt();
    const moved = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: 'keychain' } });
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({ anonymous: false });
    const status = JSON.parse((await home.run(['status', '--json'], { env: { PLAT_TOKEN_STORE: 'keychain' } })).stdout).profiles[0];
    expect(status).toMatchObject({ tokenStore: 'keychain', tokenType: 'DPoP', dpopJkt: jkt });
    const text = (await filesWithText(home.dir)).map(({ text }) => text).join('\n');
    expect(text).not.toContain(dpopKey.jwk.d);
    // Still bound, by the same key: the API checked a proof for each call.
    const again = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: 'keychain' } });
    expect(again.code, again.stderr).toBe(0);
    expect(platform.dpopProofs.every((p) => p.jkt === jkt)).toBe(true);
    expect((await home.run(['logout'], { env: { PLAT_TOKEN_STORE: 'keychain' } })).code).toBe(0);
  });
});
