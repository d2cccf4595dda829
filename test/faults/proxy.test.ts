/**
 * `plat proxy` when things go wrong: the token expires under load (8 clients, one refresh at the server)
 * and in the middle of a streamed body, Ctrl-C with requests in flight, and a platform answer that tries to set
 * cookies or CORS for the proxy's origin, and a body that breaks off.
 */
import { spawn } from 'node:child_process';
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { KnownSecrets } from '../../src/redact.js';
import { signIn } from '../helpers/consent.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { curl, startPlatProxy, stopAllProxies } from '../helpers/proxy.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();

afterEach(stopAllProxies);

const login = () => signIn(home, platform, ['--scope', 'courses:read']);

/**
 * From now on the platform refuses the stored access token as expired (401 invalid_token, as for a token past its
 * time), and takes every other: what a proxy sees when its token expires, at a moment the test chooses.
 */
async function expireAccessToken(): Promise<string> {
  const { accessToken } = await readStoredSession(home);
  platform.override('/api/', (req, res) => {
    if (req.headers.authorization !== `Bearer ${accessToken}`) return false;
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token", error_description="access token expired"' });
    res.end('{"error":"invalid_token"}');
    return true;
  });
  return accessToken;
}

/** curl with several URLs: each answered in turn on one connection; every status, in order. */
function curlMany(urls: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const args = ['-s', '-w', ' %{http_code}', ...urls.flatMap((url) => ['-o', '/dev/null', url])];
    const child = spawn('curl', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', () => resolve(out.trim().split(/\s+/).map(Number)));
  });
}

describe('plat proxy: the token stops being valid', () => {
  it('under load from 8 clients: every request answered as the user, exactly one refresh at the server', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
    const refused = await expireAccessToken();
    platform.stats.reset();
    const statuses = await Promise.all(Array.from({ length: 8 }, () => curlMany(Array.from({ length: 5 }, () => `${proxy.url}api/courses`))));
    expect(statuses.flat()).toEqual(Array(40).fill(200));
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect(platform.stats.count('refresh-replay')).toBe(0);
    expect((await readStoredSession(home)).accessToken).not.toBe(refused);
    // A plat beside the proxy uses the one refresh too.
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    expect(platform.stats.count('token:refresh_token')).toBe(1);
  });

  it('in the middle of a streamed body: the body goes on whole, and the next request refreshes once', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const bytes = 32 * 1024 * 1024;
    const child = spawn('curl', ['-sS', '-f', `${proxy.url}api/download?bytes=${bytes}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let received = 0;
    let patternOk = true;
    let revoked: Promise<string> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      for (let i = 0; i < chunk.length; i += 4099) if (chunk[i] !== (received + i) % 256) patternOk = false;
      received += chunk.length;
      if (!revoked) {
        // Held still while the token is revoked: curl, the proxy and the platform wait on backpressure meanwhile.
        child.stdout.pause();
        revoked = expireAccessToken().finally(() => child.stdout.resume());
      }
    });
    const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
    await revoked;
    expect(exit).toBe(0);
    expect(received).toBe(bytes);
    expect(patternOk).toBe(true);
    platform.stats.reset();
    const next = await curl(`${proxy.url}api/courses`);
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    expect(platform.stats.count('token:refresh_token')).toBe(1);
  });

  it('for good (the refresh token refused too): 401 naming plat login, and the proxy goes on serving after a login', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { refreshToken } = await readStoredSession(home);
    const { client } = await readProfile(home);
    await fetch(`${platform.baseUrl}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token', client_id: client.clientId }),
    });
    const ended = await curl(`${proxy.url}api/courses`);
    expect(ended.status).toBe(401);
    expect(JSON.parse(ended.body)).toMatchObject({ error: 'not_signed_in' });
    expect(JSON.parse(ended.body).message).toMatch(/plat login/);
    await login();
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
  });
});

describe('plat proxy: Ctrl-C', () => {
  it('with requests in flight: it exits 130 and closes them, none left hanging', async () => {
    await login();
    const proxy = await startPlatProxy(home, ['--verbose']);
    let arrived!: () => void;
    const atPlatform = new Promise<void>((resolve) => (arrived = resolve));
    // A platform that takes the request and never answers it.
    platform.override('/api/hang', (req) => {
      req.resume();
      arrived();
      return true;
    });
    const started = Date.now();
    const hanging = curl(`${proxy.url}api/hang`);
    await atPlatform;
    const ended = await proxy.stop('SIGINT');
    const client = await hanging;
    expect(ended.code).toBe(130);
    expect(ended.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(client.exit).not.toBe(0); // the connection was closed: curl says so instead of waiting
    expect(client.exit).not.toBe(28); // curl's own --max-time: it was never left to time out
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('plat proxy: a body that breaks off', () => {
  it('closes the client\'s connection, never a short body passed off as whole, and goes on serving', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    // 400 bytes of a declared 1,000, and of a chunked body with no length at all, then the connection is gone.
    for (const [path, length] of [['/api/short', '1000'], ['/api/short-chunked', undefined]] as const) {
      platform.override(path, (req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/octet-stream', ...(length ? { 'content-length': length } : {}) });
        res.write(Buffer.alloc(400, 'x'), () => res.destroy());
        return true;
      });
      // A proxy that left the connection open would have curl wait out its --max-time (exit 28) instead.
      const answer = await curl(`${proxy.url}${path.slice(1)}`, ['--max-time', '10']);
      expect(answer.status).toBe(200);
      expect([18, 56]).toContain(answer.exit); // partial body, receive failure: curl knows the body is not whole
      expect(answer.body.length).toBeLessThan(1000);
    }
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
  });

  it('from the client\'s side ends the platform\'s body too, so nothing is left streaming to nobody', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    let platformClosed!: () => void;
    const closed = new Promise<void>((resolve) => (platformClosed = resolve));
    // A body that never ends on its own: only a closed connection ends it.
    platform.override('/api/endless', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(1024, 'x'));
      res.once('close', platformClosed);
      return true;
    });
    await new Promise<void>((resolve, reject) => {
      const client = request(`${proxy.url}api/endless`, (res) => res.once('data', () => (client.destroy(), resolve())));
      client.once('error', reject);
      client.end();
    });
    // The proxy closes its request to the platform once the client went away, well before the body-idle deadline
    // (30 s) would have ended an exchange left open: a bound, not a wait (it resolves as soon as the close comes).
    const bound = new Promise<boolean>((resolve) => setTimeout(resolve, scaled(2_000, { under: 20_000 }), false).unref());
    expect(await Promise.race([closed.then(() => true), bound])).toBe(true);
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
  });
});

describe('plat proxy: a hostile platform answer', () => {
  it('that sets cookies and CORS for the proxy\'s origin changes nothing the proxy grants', async () => {
    await login();
    const proxy = await startPlatProxy(home, ['--verbose']);
    platform.override('/api/hostile', (req, res) => {
      req.resume();
      res.writeHead(200, [
        'content-type', 'application/json',
        'set-cookie', 'session=stolen; Domain=127.0.0.1; Path=/',
        'set-cookie', 'other=1',
        // Header names are case-insensitive: every spelling is the same header, and is dropped.
        'Set-Cookie', 'capitalised=1',
        'SET-COOKIE', 'shouted=1',
        'Set-Cookie2', 'old=1',
        'ACCESS-CONTROL-ALLOW-ORIGIN', '*',
        'access-control-allow-origin', '*',
        'access-control-allow-credentials', 'true',
        'access-control-allow-methods', 'GET, POST, DELETE',
        'access-control-allow-headers', 'authorization',
        'connection', 'x-hop',
        'x-hop', 'hop',
        'x-kept', 'yes',
      ]);
      res.end('{"ok":true}');
      return true;
    });
    const answer = await curl(`${proxy.url}api/hostile`);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('{"ok":true}');
    expect(answer.headers['x-kept']).toEqual(['yes']);
    const names = Object.keys(answer.headers);
    expect(names.filter((n) => n.startsWith('access-control-') || n.startsWith('set-cookie') || n === 'x-hop')).toEqual([]);
    const stderr = await proxy.stderrContains('/api/hostile');
    expect(stderr).toContain('Set-Cookie dropped; Access-Control-* dropped');
    // And what a web page would need is still refused.
    const fromPage = await curl(`${proxy.url}api/hostile`, ['-H', 'Origin: http://127.0.0.1']);
    expect(fromPage.status).toBe(403);
    const preflight = await curl(`${proxy.url}api/hostile`, ['-X', 'OPTIONS', '-H', 'Origin: http://evil.example', '-H', 'Access-Control-Request-Method: DELETE']);
    expect(preflight.status).toBe(403);
    expect(Object.keys(preflight.headers).filter((n) => n.startsWith('access-control-'))).toEqual([]);
    // A platform that echoes the Authorization it was sent in a header does not hand the client the token.
    platform.override('/api/echo-auth', (req, res) => {
      req.resume();
      const token = String(req.headers.authorization).replace(/^Bearer /, '');
      res.writeHead(200, {
        'content-type': 'text/plain',
        'x-you-sent': String(req.headers.authorization),
        // Percent-encoded in a URL, as a platform that puts it in a link writes it.
        location: `/api/next?access_token=${encodeURIComponent(token).replace(/[A-Za-z0-9]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
        'x-other': 'kept',
      });
      res.end('ok');
      return true;
    });
    const echo = await curl(`${proxy.url}api/echo-auth`);
    expect(echo.status).toBe(200);
    expect(echo.headers['x-you-sent']).toBeUndefined();
    expect(echo.headers.location).toBeUndefined();
    expect(echo.headers['x-other']).toEqual(['kept']);
    expect(JSON.stringify(echo)).not.toContain((await readStoredSession(home)).accessToken);
    expect(await proxy.stderrContains('/api/echo-auth')).toContain('a header that echoed the token dropped');
    const withCookie = await curl(`${proxy.url}api/echo`, ['-H', 'Cookie: session=stolen']);
    expect(JSON.parse(withCookie.body).headers.cookie).toBeUndefined();
  });
});

describe('plat proxy: an answer that reflects the session\'s secrets', () => {
  /** Every spelling of `secret` that KnownSecrets reads: each character escaped as JSON (`\u0041`) or a URL (`%41`). */
  const unicodeEscaped = (secret: string) => [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const percentEncoded = (secret: string) => [...secret].map((c, i) => (i % 2 ? c : `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('');

  /** The session's secrets, and a check that a text holds none of them in any spelling KnownSecrets.scrub reads. */
  async function secretsOf(): Promise<{ values: string[]; holdsNone: (text: string) => void }> {
    const session = await readStoredSession(home);
    const values = [session.accessToken, session.refreshToken, session.idToken].filter((v): v is string => typeof v === 'string');
    expect(values.length).toBeGreaterThanOrEqual(2);
    const known = new KnownSecrets();
    known.remember(...values);
    return {
      values,
      holdsNone: (text) => {
        for (const value of values) expect(text).not.toContain(value);
        expect(known.scrub(text)).toBe(text);
      },
    };
  }

  /** A reflection page: the request's headers, the session's other secrets, in the spellings a platform writes. */
  function reflection(req: IncomingMessage, values: string[]): string {
    const token = String(req.headers.authorization).replace(/^Bearer /, '');
    return JSON.stringify({
      headers: req.headers,
      others: values,
      link: `/api/next?access_token=${percentEncoded(token)}`,
      escaped: '@@ESCAPED@@',
    }).replace('@@ESCAPED@@', unicodeEscaped(token));
  }

  it('gives back no secret from a JSON reflection, an HTML error page, a percent-encoded or \\u-escaped spelling, keeping Content-Length true', async () => {
    await login();
    const { values, holdsNone } = await secretsOf();
    const proxy = await startPlatProxy(home);
    let sentLength = 0;
    platform.override('/api/reflect/json', (req, res) => {
      req.resume();
      const body = Buffer.from(reflection(req, values));
      sentLength = body.length;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
      return true;
    });
    platform.override('/api/reflect/html', (req, res) => {
      req.resume();
      const rows = Object.entries(req.headers).map(([name, value]) => `<tr><th>${name}</th><td>${String(value)}</td></tr>`).join('');
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end(`<html><body><h1>Internal Server Error</h1><table>${rows}</table></body></html>`);
      return true;
    });
    const json = await curl(`${proxy.url}api/reflect/json`);
    expect(json.status).toBe(200);
    holdsNone(json.body);
    expect(Number(json.headers['content-length']?.[0])).toBe(sentLength);
    expect(Buffer.byteLength(json.body, 'latin1')).toBe(sentLength);
    // Still the platform's JSON, the secrets masked where they stood.
    const parsed = JSON.parse(json.body);
    expect(parsed.headers.authorization).toMatch(/^Bearer \*+$/);
    const html = await curl(`${proxy.url}api/reflect/html`);
    expect(html.status).toBe(500);
    expect(html.body).toContain('<th>authorization</th><td>Bearer ');
    holdsNone(html.body);
  });

  it('gives back no secret from a gzip-, deflate- (either format) or br-encoded reflection: decoded in the proxy and passed on as identity', async () => {
    await login();
    const { values, holdsNone } = await secretsOf();
    const proxy = await startPlatProxy(home);
    const encoders: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
    for (const [coding, encode] of Object.entries(encoders)) {
      platform.override(`/api/reflect/${coding}`, (req, res) => {
        req.resume();
        // Encoded whatever the request asked: a platform that compresses every answer.
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding, etag: '"v1"' });
        res.end(encode(Buffer.from(reflection(req, values))));
        return true;
      });
    }
    for (const coding of Object.keys(encoders)) {
      for (const args of [[], ['--compressed']]) {
        const answer = await curl(`${proxy.url}api/reflect/${coding}`, args);
        expect(answer.status, coding).toBe(200);
        expect(answer.headers['content-encoding'], coding).toBeUndefined();
        expect(answer.headers.etag).toEqual(['W/"v1"']);
        holdsNone(answer.body);
        expect(JSON.parse(answer.body).headers.authorization).toMatch(/^Bearer \*+$/);
      }
    }
    // Bare deflate data under `deflate` (no zlib header), as some servers send it and browsers read it: decoded too,
    // not a closed connection.
    platform.override('/api/reflect/raw-deflate', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'deflate' });
      res.end(deflateRawSync(Buffer.from(reflection(req, values))));
      return true;
    });
    const raw = await curl(`${proxy.url}api/reflect/raw-deflate`);
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBeUndefined();
    holdsNone(raw.body);
    expect(JSON.parse(raw.body).headers.authorization).toMatch(/^Bearer \*+$/);
    // An answer without a secret decodes to exactly the platform's bytes.
    const plain = Buffer.from(Array.from({ length: 300_000 }, (_, i) => String.fromCharCode(32 + (i % 90))).join(''));
    platform.override('/api/packed', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(plain));
      return true;
    });
    expect((await curl(`${proxy.url}api/packed`)).body).toBe(plain.toString('latin1'));
  });

  it('gives back no secret split across chunk boundaries, written a few bytes at a time', async () => {
    await login();
    const { values, holdsNone } = await secretsOf();
    const proxy = await startPlatProxy(home);
    platform.override('/api/reflect/trickle', (req, res: ServerResponse) => {
      req.resume();
      const body = Buffer.from(reflection(req, values));
      res.writeHead(200, { 'content-type': 'application/json' });
      // Chunked: each write its own chunk, which the proxy reads as one (every few bytes a boundary).
      let at = 0;
      const next = () => {
        if (at >= body.length) return res.end();
        const size = 1 + (at % 5);
        res.write(body.subarray(at, at + size), () => setImmediate(next));
        at += size;
      };
      next();
      return true;
    });
    const answer = await curl(`${proxy.url}api/reflect/trickle`);
    expect(answer.status).toBe(200);
    holdsNone(answer.body);
    expect(JSON.parse(answer.body).others).toHaveLength(values.length);
  });

  it('offers the platform only codings it can decode and asks for no range, and refuses an answer in another coding (zstd) in its own name', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const seen: Array<string | undefined> = [];
    const ranges: Array<string | undefined> = [];
    platform.override('/api/coding', (req, res) => {
      req.resume();
      seen.push(req.headers['accept-encoding']);
      ranges.push(req.headers.range ?? (req.headers['if-range'] as string | undefined));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-encoding': 'zstd' });
      res.end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]));
      return true;
    });
    const refused = await curl(`${proxy.url}api/coding`, ['-H', 'Accept-Encoding: zstd, gzip;q=0.5, br, compress']);
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'undecodable_answer' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    await curl(`${proxy.url}api/coding`);
    // A range is not asked for: each part of a reflection would hold too little of a token to be seen as one.
    await curl(`${proxy.url}api/coding`, ['-H', 'Accept-Encoding: gzip', '-H', 'Range: bytes=0-3', '-H', 'If-Range: "v1"']);
    expect(seen).toEqual(['gzip;q=0.5, br', 'identity', 'gzip']);
    expect(ranges).toEqual([undefined, undefined, undefined]);
  });
});
