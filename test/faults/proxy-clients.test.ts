/**
 * `plat proxy` against clients that misbehave: nothing a local process does (a CONNECT or an upgrade it then
 * closes, a reset at any point, a TLS hello on the plain port, hundreds of slow connections) ends the proxy or
 * stalls its caller. After each, the proxy still answers a normal request.
 */
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { signIn } from '../helpers/consent.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { curl, startPlatProxy, stopAllProxies, type RunningPlatProxy } from '../helpers/proxy.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();

afterEach(stopAllProxies);

const login = () => signIn(home, platform, ['--scope', 'courses:read courses:write']);

/** The proxy is still running and answers a normal request as the user. */
async function stillServes(proxy: RunningPlatProxy): Promise<void> {
  const answer = await curl(`${proxy.url}api/courses`);
  expect(answer.status, proxy.stderr()).toBe(200);
  expect(JSON.parse(answer.body)).toMatchObject({ anonymous: false, sub: 'user-ada' });
  expect(proxy.child.exitCode, proxy.stderr()).toBeNull();
  expect(proxy.stderr()).not.toMatch(/Unhandled|ECONNRESET|\n\s+at /);
}

/** A raw connection to the proxy's port, opened. */
function open(url: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * The body of the last answer in `raw` (HTTP/1.1 as it came off a connection), its chunked framing undone: the
 * proxy may pass an answer on in chunks of any size (a busy machine splits `held-answer` into `held-answe` and `r`).
 */
function lastBody(raw: string): string {
  const start = raw.lastIndexOf('HTTP/1.1 ');
  const headEnd = raw.indexOf('\r\n\r\n', start);
  if (start === -1 || headEnd === -1) return '';
  let rest = raw.slice(headEnd + 4);
  if (!/\r\ntransfer-encoding: *chunked\r\n/i.test(`${raw.slice(start, headEnd)}\r\n`)) return rest;
  let body = '';
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = lineEnd === -1 ? NaN : parseInt(rest.slice(0, lineEnd), 16);
    if (!(size > 0) || rest.length < lineEnd + 2 + size) return body;
    body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

/** Resolves with the first bytes the proxy sends on `socket` (or '' when it closes without any). */
function firstBytes(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (d: Buffer) => resolve(d.toString('latin1')));
    socket.once('close', () => resolve(''));
  });
}

/** Sends `text`, waits for the proxy's first bytes (when `readFirst`), then resets the connection (an RST). */
async function sendThenReset(url: string, text: string, readFirst: boolean): Promise<string> {
  const socket = await open(url);
  socket.on('error', () => {});
  const first = readFirst ? firstBytes(socket) : Promise.resolve('');
  socket.write(text);
  const seen = await first;
  // Once our write has left: the proxy has the bytes before the reset reaches it.
  await new Promise<void>((resolve) => (socket.writableLength === 0 ? resolve() : socket.once('drain', () => resolve())));
  socket.resetAndDestroy();
  return seen;
}

/** A curl process with `args`; its exit code and stderr. */
function curlRaw(args: string[]): Promise<{ exit: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '20', ...args], (error, _stdout, stderr) =>
      resolve({ exit: error ? Number((error as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

describe('plat proxy: a CONNECT or an upgrade the client closes', () => {
  it('curl -p -x (a CONNECT tunnel through the proxy) is refused, and its close leaves the proxy serving', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { origin } = new URL(proxy.url);
    for (let i = 0; i < 3; i++) {
      const tunnel = await curlRaw(['-p', '-x', origin, 'https://school.invalid/']);
      expect(tunnel.exit).not.toBe(0);
      expect(tunnel.stderr).toMatch(/405|CONNECT/);
    }
    await stillServes(proxy);
  });

  it('a CONNECT reset by the client, before and after its answer, leaves the proxy serving', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const connectLine = 'CONNECT school.invalid:443 HTTP/1.1\r\nHost: school.invalid:443\r\n\r\n';
    expect(await sendThenReset(proxy.url, connectLine, true)).toMatch(/^HTTP\/1\.1 405 /);
    await sendThenReset(proxy.url, connectLine, false);
    // A CONNECT followed at once by a TLS hello (what a client that does not wait sends), then a reset.
    await sendThenReset(proxy.url, `${connectLine}\x16\x03\x01\x00\x05hello`, true);
    await stillServes(proxy);
  });

  it('an upgrade (WebSocket) closed by curl and reset by a raw client leaves the proxy serving', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const upgrade = await curlRaw(['-f', '-H', 'Connection: Upgrade', '-H', 'Upgrade: websocket', '-H', 'Sec-WebSocket-Version: 13', '-H', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', `${proxy.url}api/courses`]);
    expect(upgrade.exit).not.toBe(0);
    const { host, pathname } = new URL(proxy.url);
    const request = `GET ${pathname}api/courses HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`;
    expect(await sendThenReset(proxy.url, request, true)).toMatch(/^HTTP\/1\.1 501 /);
    await sendThenReset(proxy.url, request, false);
    await stillServes(proxy);
  });
});

describe('plat proxy: a client that resets or speaks another protocol', () => {
  it('a reset in the middle of a request (its headers, a small body, a streamed upload) leaves the proxy serving', async () => {
    await login();
    const proxy = await startPlatProxy(home, ['--allow-write']);
    const { host, pathname } = new URL(proxy.url);
    await sendThenReset(proxy.url, `GET ${pathname}api/courses HTTP/1.1\r\nHost: ${host}\r\nX-Half: `, false);
    // A body small enough to be kept for a replay, and one that streams to the platform: each cut off.
    for (const length of [1_000, 10 * 1024 * 1024]) {
      await sendThenReset(proxy.url, `PUT ${pathname}api/echo HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${length}\r\n\r\n${'x'.repeat(500)}`, false);
      await stillServes(proxy);
    }
    // Chunked, cut inside a chunk.
    await sendThenReset(proxy.url, `POST ${pathname}api/echo HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n400\r\nabc`, false);
    await stillServes(proxy);
  });

  it('a reset in the middle of an answer (a download under way) leaves the proxy serving', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { host, pathname } = new URL(proxy.url);
    const seen = await sendThenReset(proxy.url, `GET ${pathname}api/download?bytes=${64 * 1024 * 1024} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, true);
    expect(seen).toMatch(/^HTTP\/1\.1 200 /);
    await stillServes(proxy);
    // Reset while the platform is still working on the answer: it comes to a connection that is gone.
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    platform.override('/api/slow', (req, res) => {
      req.resume();
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(256 * 1024, 'x'), answered);
      }, 300);
      return true;
    });
    await sendThenReset(proxy.url, `GET ${pathname}api/slow HTTP/1.1\r\nHost: ${host}\r\n\r\n`, false);
    await done;
    await stillServes(proxy);
  });

  it('a TLS ClientHello on its plain port is refused and closed, and the proxy goes on serving', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { port } = new URL(proxy.url);
    const failure = await new Promise<string>((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), servername: 'localhost', rejectUnauthorized: false }, () => resolve('connected'));
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    expect(failure).not.toBe('connected');
    // And by curl, as a person who typed https:// would.
    const https = await curlRaw(['-k', `https://127.0.0.1:${port}/`]);
    expect(https.exit).not.toBe(0);
    await stillServes(proxy);
  });
});

describe('plat proxy: slow clients', () => {
  it("400 slow connections held open (headers a byte at a time, or nothing at all) do not delay the caller's request past 2 s", async () => {
    await login();
    const proxy = await startPlatProxy(home);
    // A proxy with 400 file descriptors (the usual limit is 1024, this machine's may be higher): slow connections
    // that were all kept would leave none for the caller's.
    await new Promise<void>((resolve, reject) =>
      execFile('prlimit', [`--pid=${proxy.child.pid}`, '--nofile=400:400'], (error) => (error ? reject(error) : resolve())),
    );
    const { host, pathname } = new URL(proxy.url);
    const slow: Socket[] = [];
    const timers: NodeJS.Timeout[] = [];
    try {
      for (let i = 0; i < 400; i++) {
        const socket = await open(proxy.url);
        socket.on('error', () => {});
        slow.push(socket);
        if (i % 2 === 0) continue; // connects and sends nothing
        // A request line and headers, one byte every 100 ms: never complete within the test.
        const text = `GET ${pathname}api/courses HTTP/1.1\r\nHost: ${host}\r\nX-Slow: ${'s'.repeat(4000)}\r\n\r\n`;
        let at = 0;
        timers.push(setInterval(() => socket.writable && at < text.length && socket.write(text[at++]!), 100));
      }
      const started = performance.now();
      const answer = await curl(`${proxy.url}api/courses`);
      const took = performance.now() - started;
      expect(answer.status).toBe(200);
      expect(took).toBeLessThan(scaled(2_000));
      await stillServes(proxy);
    } finally {
      for (const timer of timers) clearInterval(timer);
      for (const socket of slow) socket.destroy();
    }
  });

  it('never evicts a connection with a request in flight, a pipelined one included, however many wait', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { host, pathname } = new URL(proxy.url);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const atPlatform = new Promise<void>((resolve) => (arrived = resolve));
    platform.override('/api/held', (req, res) => {
      req.resume();
      arrived();
      void released.then(() => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('held-answer');
      });
      return true;
    });
    // Two requests on one connection: the first answered at once, the second held at the platform.
    const busy = await open(proxy.url);
    let seen = '';
    busy.on('data', (d: Buffer) => (seen += d.toString('latin1')));
    const busyClosed = new Promise<void>((resolve) => busy.once('close', () => resolve()));
    busy.write(`GET ${pathname}api/courses HTTP/1.1\r\nHost: ${host}\r\n\r\nGET ${pathname}api/held HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    await atPlatform;
    // More silent connections than may wait: the longest waiting are closed, the busy one is not.
    const silent: Socket[] = [];
    try {
      // The proxy has closed the longest waiting once 300 - 256 of them are closed (the cap is 256): only then is
      // the held answer let go, so the busy connection has been through every eviction before it is answered.
      let closedCount = 0;
      let enoughClosed!: () => void;
      const evicted = new Promise<void>((resolve) => (enoughClosed = resolve));
      for (let i = 0; i < 300; i++) {
        const socket = await open(proxy.url);
        socket.on('error', () => {});
        socket.once('close', () => ++closedCount >= 300 - 256 && enoughClosed());
        socket.resume();
        silent.push(socket);
      }
      await Promise.race([evicted, busyClosed]);
      release();
      const done = new Promise<boolean>((resolve) => {
        const check = () => lastBody(seen) === 'held-answer' && resolve(true);
        busy.on('data', check);
        check();
        void busyClosed.then(() => resolve(lastBody(seen) === 'held-answer'));
      });
      expect(await done, seen).toBe(true);
      expect(seen.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    } finally {
      busy.destroy();
      for (const socket of silent) socket.destroy();
    }
    await stillServes(proxy);
  });

  it('closes a connection whose headers never finish, and one that sends nothing, at its header deadline', async () => {
    await login();
    const proxy = await startPlatProxy(home);
    const { host, pathname } = new URL(proxy.url);
    const half = await open(proxy.url);
    half.on('error', () => {});
    half.write(`GET ${pathname}api/courses HTTP/1.1\r\nHost: ${host}\r\nX-Half: `);
    const silent = await open(proxy.url);
    silent.on('error', () => {});
    const closed = (socket: Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()).resume());
    // The deadline is 10 s; Node's own default (60 s, looked at every 30 s) is what the bound must tell apart.
    const bound = new Promise<boolean>((resolve) => setTimeout(resolve, scaled(15_000, { under: 55_000 }), false).unref());
    let told = '';
    half.on('data', (d: Buffer) => (told += d.toString('latin1')));
    expect(await Promise.race([Promise.all([closed(half), closed(silent)]).then(() => true), bound])).toBe(true);
    expect(told).toMatch(/^HTTP\/1\.1 408 /);
    expect(told).toContain('request_timeout');
    await stillServes(proxy);
  }, 60_000);
});
