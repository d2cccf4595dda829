/**
 * The HTTP layer as scripts meet it: retries on resets, proxies from the environment, the User-Agent, --timeout.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome(() => ({ PLAT_BASE_URL: platform.baseUrl }));

/** A proxy's CONNECT tunnel (as undici uses for https): the client's raw socket relayed to host:port. */
function relay(client: import('node:stream').Duplex, head: Buffer, port: number, host: string): void {
  const upstream = connect(port, host, () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
}

describe('plat call over an unreliable network', () => {
  it('retries a GET whose connection is reset, and succeeds', async () => {
    let calls = 0;
    platform.override('/api/reset-once', (req, res) => {
      calls++;
      if (calls === 1) {
        req.socket.destroy();
        return true;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/reset-once']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true });
    expect(calls).toBe(2);
  });

  it('does not retry a POST whose connection is reset (exit 3)', async () => {
    let calls = 0;
    platform.override('/api/reset-always', (req) => {
      calls++;
      req.socket.destroy();
      return true;
    });
    const result = await home.run(['call', 'POST', '/api/reset-always', '-f', 'a=1']);
    expect(result.code).toBe(3);
    expect(calls).toBe(1);
    expectCleanError(result);
  });

  it('gives up after a bounded number of retries on 503', async () => {
    let calls = 0;
    platform.override('/api/always-busy', (_req, res) => {
      calls++;
      res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/json' });
      res.end('{"busy":true}');
      return true;
    });
    const result = await home.run(['call', 'GET', '/api/always-busy']);
    expect(result.code).toBe(1);
    expect(calls).toBe(3); // the first try and the default two retries of an idempotent method
    expect(result.stderr).toMatch(/HTTP 503/);
    expect(result.stderr.match(/GET \/api\/always-busy: HTTP 503; retrying in \d+(\.\d)? s \(\d\/2\)/g)).toHaveLength(2);
    calls = 0;
    const more = await home.run(['call', 'GET', '/api/always-busy', '--retry', '4']);
    expect(more.code).toBe(1);
    expect(calls).toBe(5);
    calls = 0;
    const none = await home.run(['call', 'POST', '/api/always-busy', '-f', 'a=b']);
    expect(none.code).toBe(1);
    expect(calls).toBe(1); // a POST is not retried unless --retry asks
  });

  it('--retry never re-sends a POST after a 502, a 504 or a reset: the server may have acted on it', async () => {
    for (const status of [502, 504]) {
      let calls = 0;
      platform.override(`/api/post-${status}`, (_req, res) => {
        calls++;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end('{"gateway":"trouble"}');
        return true;
      });
      const result = await home.run(['call', 'POST', `/api/post-${status}`, '-f', 'a=1', '--retry', '3']);
      expect(result.code, result.stderr).toBe(1);
      expect(calls).toBe(1);
      expect(result.stderr).not.toMatch(/retrying/);
    }
    let resets = 0;
    platform.override('/api/post-reset', (req) => {
      resets++;
      req.socket.destroy();
      return true;
    });
    const reset = await home.run(['call', 'POST', '/api/post-reset', '-f', 'a=1', '--retry', '3']);
    expect(reset.code).toBe(3);
    expect(resets).toBe(1);
    expect(reset.stderr).not.toMatch(/retrying/);
    expectCleanError(reset);
  });

  it('--timeout ends a slow call with exit 3', async () => {
    platform.override('/api/slow', () => true); // never answers
    const result = await home.run(['call', 'GET', '/api/slow', '--timeout', '1']);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/timed out/);
  });

  it('sends User-Agent plat/<version>', async () => {
    const result = await home.run(['call', 'GET', '/api/echo']);
    expect(JSON.parse(result.stdout).headers['user-agent']).toMatch(/^plat\/\d+\.\d+\.\d+/);
  });
});

describe('proxies from the environment', () => {
  let proxy: Server;
  let proxied: string[] = [];

  beforeAll(async () => {
    // A plain forward proxy: absolute-form requests are relayed to their origin.
    proxy = createServer((req, res) => {
      proxied.push(`${req.method} ${req.url}`);
      const target = new URL(req.url!);
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    // undici tunnels through CONNECT (as it would for https), so the proxy relays raw sockets too.
    proxy.on('connect', (req, client, head) => {
      proxied.push(`CONNECT ${req.url}`);
      const [host, port] = req.url!.split(':');
      relay(client, head, Number(port), host!);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

  it('sends requests through HTTP_PROXY', async () => {
    proxied = [];
    const port = (proxy.address() as AddressInfo).port;
    const result = await home.run(['call', 'GET', '/api/courses'], { env: { HTTP_PROXY: `http://127.0.0.1:${port}` } });
    expect(result.code, result.stderr).toBe(0);
    const origin = new URL(platform.baseUrl);
    expect(proxied.length).toBe(1);
    expect([`GET ${platform.baseUrl}/api/courses`, `CONNECT ${origin.host}`]).toContain(proxied[0]);
  });

  it('sends the token only to the platform\'s exact origin, never to a host that merely starts like it', async () => {
    // Names no test resolves: the proxy is the only way to them, and it answers for every host itself, recording
    // which host was asked for and whether a token came along. The platform is http://localhost (plain http is
    // allowed only for loopback names), so the look-alikes share its origin's text as a prefix.
    const seen: Array<{ host: string | undefined; authorization: string | undefined }> = [];
    const origin = createServer((req, res) => {
      seen.push({ host: req.headers.host, authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    const anyHost = createServer((req, res) => {
      seen.push({ host: req.headers.host, authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    anyHost.on('connect', (_req, client, head) => relay(client, head, (origin.address() as AddressInfo).port, '127.0.0.1'));
    await new Promise<void>((r) => anyHost.listen(0, '127.0.0.1', r));
    try {
      const env = {
        HTTP_PROXY: `http://127.0.0.1:${(anyHost.address() as AddressInfo).port}`,
        NO_PROXY: undefined,
        no_proxy: undefined,
        PLAT_BASE_URL: 'http://localhost',
        PLAT_TOKEN: 'token-for-localhost-only',
      };
      const own = await home.run(['call', 'GET', 'http://localhost/api/x'], { env });
      expect(own.code, own.stderr).toBe(0);
      expect(seen).toEqual([{ host: 'localhost', authorization: 'Bearer token-for-localhost-only' }]);
      for (const [url, host] of [
        ['http://localhost.evil.test/api/x', 'localhost.evil.test'],
        ['http://localhost@evil.test/api/x', 'evil.test'],
        ['http://localhost:80@evil.test/api/x', 'evil.test'],
      ] as const) {
        seen.length = 0;
        const result = await home.run(['call', 'GET', url], { env });
        expect(result.code, result.stderr).toBe(0);
        expect(seen).toEqual([{ host, authorization: undefined }]);
        expect(result.stderr).toContain(`http://${host} is not the platform's origin: calling it without your token.`);
        expect(result.stderr).not.toContain(env.PLAT_TOKEN);
      }
    } finally {
      await new Promise<void>((r) => anyHost.close(() => r()));
      await new Promise<void>((r) => origin.close(() => r()));
    }
  });

  it('bypasses the proxy for hosts in NO_PROXY', async () => {
    proxied = [];
    const port = (proxy.address() as AddressInfo).port;
    const result = await home.run(['call', 'GET', '/api/courses'], { env: { HTTP_PROXY: `http://127.0.0.1:${port}`, NO_PROXY: '127.0.0.1' } });
    expect(result.code).toBe(0);
    expect(proxied).toEqual([]);
  });
});
