/**
 * `plat proxy` with real curl against the reference platform: the session's token added on the way, never given to
 * the client; who may use it (the key, Host, Origin, absolute-form targets, CONNECT); read-only unless
 * --allow-write; the headers that cross it; a login or logout while it runs; the unix socket; the line it prints for
 * eval; its access log; `plat exec --proxy`.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { METHODS, request } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCleanError, platBin, repoRoot } from '../helpers/cli.js';
import { httpie, isCI, pythonRequests, wget } from '../helpers/components.js';
import { signIn } from '../helpers/consent.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { curl, proxyPeakMiB, startPlatProxy, stopAllProxies } from '../helpers/proxy.js';
import { readStoredSession } from '../helpers/state.js';

const platform = usePlatform();
const home = useHome();

afterEach(stopAllProxies);

const login = (scopes = 'courses:read') => signIn(home, platform, ['--scope', scopes]);

/** The request the platform's /api/echo saw, as it reports it. */
const echoed = (body: string) => JSON.parse(body) as { method: string; path: string; headers: Record<string, string>; body: string; authenticated: boolean; sub: string | null };

/** A request written byte for byte, for what curl will not send (CONNECT); the raw answer back. */
function raw(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('plat proxy', () => {
  it('forwards to the platform with the session\'s token, which the client never sees, and prints one line for eval', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    expect(proxy.line).toMatch(/^PLAT_PROXY_URL='?http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}\/'?$/);
    // The line means to a shell what it says.
    const evaluated = await new Promise<string>((resolve, reject) =>
      execFile('sh', ['-c', `eval "$1"; printf %s "$PLAT_PROXY_URL"`, 'sh', proxy.line], (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    expect(evaluated).toBe(proxy.url);

    const result = await curl(`${proxy.url}api/echo?x=1`, ['-H', 'X-Custom: kept']);
    expect(result.status).toBe(200);
    const seen = echoed(result.body);
    expect(seen).toMatchObject({ method: 'GET', path: '/api/echo', authenticated: true, sub: 'user-ada' });
    expect(seen.headers['x-custom']).toBe('kept');
    const { accessToken, refreshToken } = await readStoredSession(home);
    for (const secret of [accessToken, refreshToken]) {
      expect(JSON.stringify(result)).not.toContain(secret);
      expect(proxy.stderr()).not.toContain(secret);
    }
    // Status, headers and body as the platform sent them.
    const courses = await curl(`${proxy.url}api/courses`);
    expect(courses.status).toBe(200);
    expect(courses.headers['content-type']?.[0]).toMatch(/application\/json/);
    expect(JSON.parse(courses.body)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    const missing = await curl(`${proxy.url}api/status/418`);
    expect(missing.status).toBe(418);
    expect(JSON.parse(missing.body)).toEqual({ status: 418 });
  });

  it('gives a Location on the platform as its own address, key included, so a client that follows it stays behind the proxy', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    platform.override('/api/moved', (req, res) => {
      req.resume();
      res.writeHead(302, { location: '/api/courses?page=2' });
      res.end();
      return true;
    });
    platform.override('/api/away', (req, res) => {
      req.resume();
      res.writeHead(302, { location: 'https://elsewhere.example/x' });
      res.end();
      return true;
    });
    const moved = await curl(`${proxy.url}api/moved`);
    expect(moved.status).toBe(302);
    expect(moved.headers.location).toEqual([`${new URL(proxy.url).pathname}api/courses?page=2`]);
    // Followed as a client follows it: against the proxy's own origin.
    const followed = await curl(new URL(moved.headers.location![0]!, proxy.url).href);
    expect(followed.status).toBe(200);
    expect(JSON.parse(followed.body)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    // Elsewhere is elsewhere: passed on as it came (the client goes there on its own, with no token).
    expect((await curl(`${proxy.url}api/away`)).headers.location).toEqual(['https://elsewhere.example/x']);
  });

  it('drops a client\'s own Authorization (said on stderr) and the hop-by-hop headers', async () => {
    await login();
    const proxy = await startPlatProxy(home, ['--verbose']);
    const result = await curl(`${proxy.url}api/echo`, [
      '-H', 'Authorization: Bearer not-the-session',
      '-H', 'Connection: keep-alive, X-Hop',
      '-H', 'X-Hop: hop',
      '-H', 'Keep-Alive: timeout=5',
      '-H', 'TE: trailers',
      '-H', 'Trailer: X-After',
      '-H', 'Proxy-Authorization: Basic c2VjcmV0',
      '-H', 'Proxy-Connection: keep-alive',
      '-H', 'Cookie: local=1',
      '-H', 'X-Kept: yes',
    ]);
    expect(result.status).toBe(200);
    const seen = echoed(result.body);
    expect(seen.authenticated).toBe(true);
    expect(seen.sub).toBe('user-ada');
    const names = Object.keys(seen.headers);
    for (const name of ['x-hop', 'keep-alive', 'te', 'trailer', 'proxy-authorization', 'proxy-connection', 'cookie']) expect(names).not.toContain(name);
    expect(seen.headers.host).toBe(new URL(platform.baseUrl).host);
    expect(seen.headers['x-kept']).toBe('yes');
    const stderr = await proxy.stderrContains('/api/echo');
    expect(stderr).toContain("the client's Authorization header dropped");
    expect(stderr).toContain('A client sent its own Authorization header: the proxy dropped it');
    expect(stderr).not.toContain('not-the-session');
  });

  it('refuses a request without its key, with a wrong key and with another proxy\'s key, forwarding nothing', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const other = await startPlatProxy(home);
    const { origin } = new URL(proxy.url);
    const otherKey = new URL(other.url).pathname;
    platform.stats.reset();
    const key = new URL(proxy.url).pathname.slice(1, -1);
    for (const target of [`${origin}/api/echo`, `${origin}/not-the-key/api/echo`, `${origin}${otherKey}api/echo`, `${proxy.url.slice(0, -2)}/api/echo`]) {
      const result = await curl(target);
      expect(result.status, target).toBe(403);
      expect(JSON.parse(result.body)).toMatchObject({ error: 'wrong_key' });
      expect(JSON.parse(result.body).message).toContain('PLAT_PROXY_URL');
      expect(JSON.stringify(result), target).not.toContain(key);
    }
    expect(platform.stats.count('GET /api/echo')).toBe(0);
    expect((await curl(`${proxy.url}api/echo`)).status).toBe(200);
    expect(platform.stats.count('GET /api/echo')).toBe(1);
  });

  it('takes a doubled slash after the key as a single one (`${PLAT_PROXY_URL}/api/x`), over TCP and on a socket', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    for (const target of [`${proxy.url}/api/echo?x=1`, `${proxy.url}//api/echo?x=1`]) {
      const result = await curl(target);
      expect(result.status, target).toBe(200);
      expect(echoed(result.body)).toMatchObject({ method: 'GET', path: '/api/echo', authenticated: true });
    }
    // The shell join people write first, with the URL's trailing slash left on.
    const joined = await new Promise<string>((resolve, reject) =>
      execFile('sh', ['-c', 'curl -sf "${PLAT_PROXY_URL}/api/courses"'], { env: { ...process.env, PLAT_PROXY_URL: proxy.url } }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    expect(JSON.parse(joined)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    const socket = path.join(home.dir, 'proxy.sock');
    const onSocket = await startPlatProxy(home, ['--socket', socket]);
    const result = await curl(`${onSocket.url}/api/courses`, ['--unix-socket', socket]);
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ anonymous: false });
  });

  it('answers a path that lost its key (an absolute path resolved against the URL) with a 403 that says so and how to join', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const key = new URL(proxy.url).pathname.slice(1, -1);
    platform.stats.reset();
    const lost = await curl(new URL('/api/courses', proxy.url).href);
    expect(lost.status).toBe(403);
    const { error, message } = JSON.parse(lost.body) as { error: string; message: string };
    expect(error).toBe('wrong_key');
    expect(message).toMatch(/key is the first path segment of PLAT_PROXY_URL/);
    expect(message).toMatch(/a path starting with a slash, resolved against that URL .* replaces it/);
    expect(message).toContain('new URL("api/x", url)');
    expect(message).toContain('"${PLAT_PROXY_URL%/}/api/x"');
    expect(message).toContain('--socket');
    expect(JSON.stringify(lost)).not.toContain(key);
    expect(platform.stats.count('GET /api/courses')).toBe(0);
    expect((await curl(new URL('api/courses', proxy.url).href)).status).toBe(200);
  });

  it('never forwards TRACE, with --allow-write or without: 405 in its own name', async () => {
    await login('courses:read courses:write');
    for (const args of [[], ['--allow-write']]) {
      const proxy = await startPlatProxy(home, args);
      platform.stats.reset();
      const traced = await curl(`${proxy.url}api/echo`, ['-X', 'TRACE']);
      expect(traced.status, args.join(' ')).toBe(405);
      expect(JSON.parse(traced.body)).toMatchObject({ error: 'trace_refused' });
      expect(JSON.parse(traced.body).message).toMatch(/never forwards TRACE/);
      expect(traced.headers.allow?.[0]).not.toMatch(/TRACE/);
      expect(platform.stats.events.filter((e) => e.path === '/api/echo')).toEqual([]);
      expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
    }
  });

  it('refuses a foreign Host (DNS rebinding), any Origin, an absolute-form URL to another host and CONNECT; grants no CORS', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { port, pathname } = new URL(proxy.url);
    platform.stats.reset();
    const rebound = await curl(`${proxy.url}api/echo`, ['-H', `Host: rebound.example:${port}`]);
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error).toBe('foreign_host');
    // Every Host but the proxy's own two names with its port, not one foreign name.
    for (const host of [`127.0.0.1`, `127.0.0.1:${Number(port) + 1}`, `127.0.0.2:${port}`, `[::1]:${port}`, `localhost.:${port}`, `0.0.0.0:${port}`, '']) {
      const foreign = await curl(`${proxy.url}api/echo`, ['-H', `Host: ${host}`]);
      expect(foreign.status, host).toBe(403);
      expect(JSON.parse(foreign.body).error, host).toBe('foreign_host');
    }
    expect((await curl(`${proxy.url}api/echo`, ['-H', `Host: LOCALHOST:${port}`])).status).toBe(200);
    const fromPage = await curl(`${proxy.url}api/echo`, ['-H', 'Origin: http://evil.example']);
    expect(fromPage.status).toBe(403);
    expect(JSON.parse(fromPage.body).error).toBe('origin_refused');
    // Any Origin: the proxy's own (a page it served would send it), `null` (a sandboxed frame, a file:// page).
    for (const origin of [new URL(proxy.url).origin, 'null', 'http://localhost']) {
      const page = await curl(`${proxy.url}api/echo`, ['-H', `Origin: ${origin}`]);
      expect(page.status, origin).toBe(403);
      expect(JSON.parse(page.body).error, origin).toBe('origin_refused');
    }
    const preflight = await curl(`${proxy.url}api/courses`, ['-X', 'OPTIONS', '-H', 'Origin: http://evil.example', '-H', 'Access-Control-Request-Method: POST']);
    expect(preflight.status).toBe(403);
    for (const r of [rebound, fromPage, preflight]) expect(Object.keys(r.headers).filter((n) => n.startsWith('access-control-'))).toEqual([]);
    const absolute = await curl(`${proxy.url}api/echo`, ['--request-target', `http://example.com${pathname}api/echo`]);
    expect(absolute.status).toBe(403);
    expect(JSON.parse(absolute.body).error).toBe('foreign_target');
    // An absolute-form URL naming the proxy itself is the same request as its path.
    const own = await curl(`${proxy.url}api/echo`, ['--request-target', `${proxy.url}api/echo`]);
    expect(own.status).toBe(200);
    const tunnel = await raw(proxy.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(tunnel).toMatch(/^HTTP\/1\.1 405 /);
    expect(tunnel).toContain('connect_refused');
    expect(platform.stats.count('GET /api/echo')).toBe(2);
  });

  it('is read-only unless --allow-write: a write is a 405 with a JSON reason, and is sent with it', async () => {
    await login('courses:read courses:write');
    const readOnly = await startPlatProxy(home);
    platform.stats.reset();
    const refused = await curl(`${readOnly.url}api/courses`, ['-X', 'POST', '-H', 'content-type: application/json', '-d', '{"name":"Algebra"}']);
    expect(refused.status).toBe(405);
    expect(refused.headers.allow?.[0]).toBe('GET, HEAD, OPTIONS');
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'read_only' });
    expect(JSON.parse(refused.body).message).toContain('--allow-write');
    expect(platform.stats.count('POST /api/courses')).toBe(0);
    // A reading method that asks the platform to treat it as a write (X-HTTP-Method-Override and its kin) is one.
    for (const name of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) {
      const overridden = await curl(`${readOnly.url}api/courses/course-101`, ['-H', `${name}: DELETE`]);
      expect(overridden.status, name).toBe(405);
      expect(JSON.parse(overridden.body)).toMatchObject({ error: 'read_only' });
    }
    expect(platform.stats.count('GET /api/courses/course-101')).toBe(0);
    // Every method but the three reading ones, not a list of writes by name: WebDAV's, PURGE, and whatever comes.
    const others = METHODS.filter((m) => !['GET', 'HEAD', 'OPTIONS', 'CONNECT'].includes(m));
    for (const method of others) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${readOnly.url}api/echo`, { method }, (res) => (res.resume(), resolve(res.statusCode ?? 0)));
        req.once('error', reject);
        req.end();
      });
      expect(status, method).toBe(405);
    }
    expect(others).toEqual(expect.arrayContaining(['MOVE', 'COPY', 'LOCK', 'PURGE']));
    // A method Node's parser does not know is refused before the gate (501), never forwarded either.
    const { host, pathname } = new URL(readOnly.url);
    const made = await raw(readOnly.url, `FROBNICATE ${pathname}api/echo HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(made).toMatch(/^HTTP\/1\.1 501 /);
    expect(made).toContain('unknown_method');
    expect(platform.stats.events.filter((e) => e.path === '/api/echo')).toEqual([]);

    const writable = await startPlatProxy(home, ['--allow-write']);
    const created = await curl(`${writable.url}api/courses`, ['-X', 'POST', '-H', 'content-type: application/json', '-d', '{"name":"Algebra"}']);
    expect(created.status).toBe(201);
    expect(JSON.parse(created.body).course).toMatchObject({ name: 'Algebra' });
    // A body too large to keep for a replay streams through.
    const big = 'x'.repeat(200 * 1024);
    await writeFile(path.join(home.dir, 'big'), big);
    const echoedBig = await curl(`${writable.url}api/echo`, ['-X', 'PUT', '--data-binary', `@${path.join(home.dir, 'big')}`]);
    expect(echoedBig.status).toBe(200);
    expect(echoed(echoedBig.body).body).toBe(big);
  });

  it('streams a large download with flat memory: 256 MiB byte for byte, the proxy\'s peak RSS within 64 MiB', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const bytes = 256 * 1024 * 1024;
    const child = spawn('curl', ['-sS', '-f', `${proxy.url}api/download?bytes=${bytes}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = 0;
    let patternOk = true;
    child.stdout.on('data', (chunk: Buffer) => {
      for (let i = 0; i < chunk.length; i += 4093) if (chunk[i] !== (received + i) % 256) patternOk = false;
      received += chunk.length;
    });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(received).toBe(bytes);
    expect(patternOk).toBe(true);
    // VmHWM: the most the proxy ever held, read after the download (the bound of test/cli/download.test.ts).
    expect(await proxyPeakMiB(proxy)).toBeLessThanOrEqual(64);
  });

  it('decodes a compressed answer with flat memory: 128 MiB inflated from 128 KiB of bare deflate, the proxy\'s peak RSS within 64 MiB', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const bytes = 128 * 1024 * 1024;
    // Content-Length is the compressed size, far under the MiB the proxy counts from: what it passes on is counted
    // instead, and the decoder holds back while curl reads (the whole answer inflated at once would be 128 MiB).
    const packed = deflateRawSync(Buffer.alloc(bytes, 0x61));
    platform.override('/api/packed-large', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'deflate', 'content-length': packed.length });
      res.end(packed);
      return true;
    });
    const child = spawn('curl', ['-sS', '-f', `${proxy.url}api/packed-large`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = 0;
    let allA = true;
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk[0] !== 0x61 || chunk[chunk.length - 1] !== 0x61) allA = false;
      received += chunk.length;
    });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(received).toBe(bytes);
    expect(allA).toBe(true);
    expect(await proxyPeakMiB(proxy)).toBeLessThanOrEqual(64);
  });

  it('streams a large upload with --allow-write with flat memory: 256 MiB read whole by the platform, the proxy\'s peak RSS within 64 MiB', async () => {
    await login('courses:read courses:write');
    const proxy = await startPlatProxy(home, ['--allow-write']);
    const bytes = 256 * 1024 * 1024;
    platform.override('/api/upload', (req, res) => {
      let received = 0;
      let patternOk = true;
      req.on('data', (chunk: Buffer) => {
        for (let i = 0; i < chunk.length; i += 4093) if (chunk[i] !== (received + i) % 251) patternOk = false;
        received += chunk.length;
      });
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ received, patternOk, authenticated: req.headers.authorization?.startsWith('Bearer ') === true }));
      });
      return true;
    });
    // curl -T - streams stdin as it comes (chunked); the test writes it with backpressure, 1 MiB at a time.
    const child = spawn('curl', ['-sS', '-f', '-T', '-', `${proxy.url}api/upload`], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const block = Buffer.alloc(1024 * 1024);
    let sent = 0;
    const writeMore = () => {
      while (sent < bytes) {
        for (let i = 0; i < block.length; i++) block[i] = (sent + i) % 251;
        sent += block.length;
        if (!child.stdin.write(Buffer.from(block))) return void child.stdin.once('drain', writeMore);
      }
      child.stdin.end();
    };
    writeMore();
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(JSON.parse(out)).toEqual({ received: bytes, patternOk: true, authenticated: true });
    expect(await proxyPeakMiB(proxy)).toBeLessThanOrEqual(64);
  });

  it('answers 401 naming plat login after a logout, and picks up a login without a restart', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
    const logout = await home.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    const after = await curl(`${proxy.url}api/courses`);
    expect(after.status).toBe(401);
    expect(JSON.parse(after.body)).toMatchObject({ error: 'not_signed_in' });
    expect(JSON.parse(after.body).message).toMatch(/plat login/);
    // --no-revoke leaves the token valid at the server: the proxy still stops using it.
    await login();
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
    expect((await home.run(['logout', '--no-revoke'])).code).toBe(0);
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(401);
    await login();
    const again = await curl(`${proxy.url}api/courses`);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ anonymous: false });
  });

  it('starts without a session (saying so) and answers 401 until a login', async () => {
    expect((await home.run(['login', '--help'])).code).toBe(0);
    const proxy = await startPlatProxy(home, [], { PLAT_BASE_URL: platform.baseUrl });
    expect(proxy.stderr()).toMatch(/Not signed in .*plat login/);
    const before = await curl(`${proxy.url}api/courses`);
    expect(before.status).toBe(401);
    expect(JSON.parse(before.body).message).toMatch(/plat login/);
    await login();
    expect((await curl(`${proxy.url}api/courses`)).status).toBe(200);
  });

  it('listens on a 0600 unix socket with --socket, and removes it when it ends', async () => {
    await login();
    const socket = path.join(home.dir, 'plat proxy.sock');
    const proxy = await startPlatProxy(home, ['--socket', socket]);
    expect(proxy.line).toBe(`PLAT_PROXY_SOCKET='${socket}' PLAT_PROXY_URL=http://localhost/`);
    expect((await stat(socket)).mode & 0o777).toBe(0o600);
    const result = await curl(`${proxy.url}api/courses`, ['--unix-socket', socket]);
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ anonymous: false });
    const ended = await proxy.stop();
    expect(ended.code).toBe(130);
    await expect(stat(socket)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes one redacted line per request with --verbose, and nothing per request without it', async () => {
    await login();
    const proxy = await startPlatProxy(home, ['--verbose']);
    await curl(`${proxy.url}api/courses?access_token=leaked&page=2`);
    const stderr = await proxy.stderrContains('/api/courses');
    const lines = stderr.split('\n').filter((l) => l.startsWith('proxy: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^proxy: GET http:\/\/127\.0\.0\.1:\d+\/api\/courses\?access_token=\[redacted\]&page=2 → 200 \(\d+\.\d ms\)$/);
    expect(stderr).not.toContain('leaked');
    expect(stderr).not.toContain(new URL(proxy.url).pathname.slice(1, -1));

    const quiet = await startPlatProxy(home);
    await curl(`${quiet.url}api/courses`);
    const ended = await quiet.stop();
    expect(ended.stderr).not.toContain('/api/courses');
  });

  it('says what is wrong with its flags (exit 2) and with a port in use (exit 1)', async () => {
    await login();
    for (const args of [['--port', 'x'], ['--port', '70000'], ['--port', '1', '--socket', '/tmp/x']]) {
      const result = await home.run(['proxy', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expectCleanError(result);
      expect(result.stdout).toBe('');
    }
    const proxy = await startPlatProxy(home);
    const taken = await home.run(['proxy', '--port', new URL(proxy.url).port]);
    expect(taken.code).toBe(1); // as a busy plat login --port
    expectCleanError(taken);
    expect(taken.stderr).toContain('is in use');
  });
});

describe('plat exec --proxy', () => {
  it('gives the program PLAT_PROXY_URL and PLAT_BASE_URL pointing at a proxy, and no token anywhere in its environment', async () => {
    await login();
    const printer = path.join(home.dir, 'print-env.cjs');
    await writeFile(printer, 'process.stdout.write(JSON.stringify(process.env));');
    const { accessToken, refreshToken } = await readStoredSession(home);
    const result = await home.run(['exec', '--proxy', '--', process.execPath, printer], { env: { PLAT_TOKEN: undefined } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(accessToken);
    expect(result.stdout).not.toContain(refreshToken);
    const env = JSON.parse(result.stdout) as Record<string, string>;
    expect(env.PLAT_TOKEN).toBeUndefined();
    expect(env.PLAT_PROXY_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/$/);
    expect(env.PLAT_BASE_URL).toBe(env.PLAT_PROXY_URL!.slice(0, -1));
  });

  it('the program calls the platform through it as the user, and the proxy ends with the program', async () => {
    await login();
    const result = await home.run(['exec', '--proxy', '--', 'sh', '-c', 'curl -sf "$PLAT_BASE_URL/api/courses"']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    const failing = await home.run(['exec', '--proxy', '--', 'sh', '-c', 'exit 3']);
    expect(failing.code).toBe(3);
  });

  it('does not run the program without a session: exit 4 naming plat login, as plain plat exec', async () => {
    const result = await home.run(['exec', '--proxy', '--', 'sh', '-c', 'echo ran'], { env: { PLAT_BASE_URL: platform.baseUrl } });
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/plat login/);
    expectCleanError(result);
  });

  it('refuses --env and --min-ttl with --proxy (the program gets no token)', async () => {
    await login();
    for (const args of [['--env', 'API_TOKEN'], ['--min-ttl', '60']]) {
      const result = await home.run(['exec', '--proxy', ...args, '--', 'true']);
      expect(result.code).toBe(2);
      expectCleanError(result);
    }
  });
});

describe("plat help scripting's proxy examples", () => {
  /** The code blocks of the proxy contract's section, as written. */
  async function blocks(): Promise<string[]> {
    const topic = await readFile(path.join(repoRoot, 'src', 'help', 'topics', 'scripting.md'), 'utf8');
    const start = topic.indexOf('## The proxy contract');
    expect(start).toBeGreaterThan(0);
    const section = topic.slice(start, topic.indexOf('\n## ', start + 1));
    return [...section.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  }

  /** The one block of the section that holds `marker`. */
  async function blockWith(marker: string): Promise<string> {
    const found = (await blocks()).filter((block) => block.includes(marker));
    expect(found, marker).toHaveLength(1);
    return found[0]!;
  }

  /** The lines of the joining block that run `tool` (a shell command each). */
  async function joinLines(tool: string): Promise<string[]> {
    const lines = (await blockWith('wget -qO-')).split('\n').filter((line) => line.startsWith(`${tool} `));
    expect(lines.length, tool).toBeGreaterThan(0);
    return lines;
  }

  /** Runs `command` under plat exec --proxy and expects the courses of the signed-in user on stdout. */
  async function answersAsTheUser(command: string[]): Promise<void> {
    const result = await home.run(['exec', '--proxy', '--', ...command]);
    expect(result.code, result.stderr).toBe(0);
    const printed = result.stdout.trim();
    expect(printed).toMatch(/user-ada/);
    expect(printed).not.toMatch(/wrong_key|error/);
  }

  it('each curl join of the joining block reaches the platform as the user', async () => {
    await login();
    for (const line of await joinLines('curl')) await answersAsTheUser(['sh', '-c', line]);
  });

  it.skipIf(wget.skip)(wget.title('the wget line of the joining block runs as written'), async () => {
    wget.require();
    await login();
    for (const line of await joinLines('wget')) await answersAsTheUser(['sh', '-c', line]);
  });

  it.skipIf(httpie.skip)(httpie.title('the httpie line of the joining block runs as written'), async () => {
    httpie.require();
    await login();
    for (const line of await joinLines('http')) await answersAsTheUser(['sh', '-c', line]);
  });

  it('the Python urljoin example keeps the key (a relative path), and "/api/..." would have lost it', async () => {
    await login();
    const code = await blockWith('urljoin');
    const script = path.join(home.dir, 'join.py');
    await writeFile(script, code);
    await answersAsTheUser(['python3', script]);
    // What the comment warns of: the absolute path, resolved the same way, gets the 403 that says how to join.
    await writeFile(script, code.replace('"api/courses"', '"/api/courses"').replace(/print\(.*\)/, 'import urllib.error\ntry:\n    urlopen(url, timeout=30)\nexcept urllib.error.HTTPError as e:\n    print(e.code, e.read().decode())'));
    const lost = await home.run(['exec', '--proxy', '--', 'python3', script]);
    expect(lost.stdout).toMatch(/^403 .*first path segment of PLAT_PROXY_URL/);
  });

  it('the Node fetch example runs as written (new URL with a relative path)', async () => {
    await login();
    const script = path.join(home.dir, 'report.mjs');
    await writeFile(script, await blockWith('process.env.PLAT_PROXY_URL'));
    await answersAsTheUser([process.execPath, script]);
  });

  /** `plat` on PATH, as after npm i -g. */
  async function pathWithPlat(): Promise<string> {
    const bin = path.join(home.dir, 'bin');
    await mkdir(bin, { recursive: true });
    await symlink(platBin, path.join(bin, 'plat')).catch(() => {});
    return `${bin}:${process.env.PATH}`;
  }

  it('the bash and curl lines work as written: the courses, a 405 for the write, and the proxy ends', async () => {
    await login();
    const [shell] = await blocks();
    const PATH = await pathWithPlat();
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile('bash', ['-c', `${shell}\nwait "$proxy"; echo "proxy ended: $?"`], { env: { ...home.env, PATH } as NodeJS.ProcessEnv, timeout: 20_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(0);
    const [courses, write, ended] = result.stdout.trim().split('\n');
    expect(JSON.parse(courses!)).toMatchObject({ anonymous: false, sub: 'user-ada' });
    expect(JSON.parse(write!)).toMatchObject({ error: 'read_only' });
    expect(ended).toBe('proxy ended: 130');
  });

  it.skipIf(!pythonRequests.available && !isCI)(pythonRequests.title('the Python requests example runs under plat exec --proxy'), async () => {
    pythonRequests.require();
    await login();
    const python = await blockWith('import os, requests');
    const script = path.join(home.dir, 'report.py');
    await writeFile(script, python!);
    const result = await home.run(['exec', '--proxy', '--', 'python3', script]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("'sub': 'user-ada'");
    expect(result.stdout).toContain("'anonymous': False");
  });
});
