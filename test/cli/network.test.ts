/**
 * The HTTP layer as scripts meet it: retries on resets, proxies from the environment, the User-Agent, --timeout.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError, makeHome, type Home } from '../helpers/cli.js';
import { startPlatform, type Platform } from '../platform/index.mjs';

let platform: Platform;
let home: Home;

beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(async () => {
  await platform.close();
});
beforeEach(async () => {
  platform.clearOverrides();
  home = await makeHome({ PLAT_BASE_URL: platform.baseUrl });
});
afterEach(async () => {
  await home.cleanup();
});

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
      const upstream = connect(Number(port), host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
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

  it('bypasses the proxy for hosts in NO_PROXY', async () => {
    proxied = [];
    const port = (proxy.address() as AddressInfo).port;
    const result = await home.run(['call', 'GET', '/api/courses'], { env: { HTTP_PROXY: `http://127.0.0.1:${port}`, NO_PROXY: '127.0.0.1' } });
    expect(result.code).toBe(0);
    expect(proxied).toEqual([]);
  });
});
