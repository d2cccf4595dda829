/**
 * plat's HTTP deadlines: 10 s to connect, 30 s for the response headers, 30 s of silence inside a body. They are
 * not user settings (plat call has --timeout for a whole request), so the deadlines themselves are tested through
 * createHttp with short ones injected, against real sockets on loopback: a listener whose accept queue is full
 * (connecting hangs, as to a host that drops packets), a server that never answers, one that stops mid-body. The
 * built CLI meets the real 10 s connect deadline once, and --timeout for the rest.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { getEventListeners } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, NetworkError, PlatError } from '../../src/errors.js';
import { createHttp, type Http } from '../../src/http/index.js';
import { createIO } from '../../src/terminal/io.js';
import { discover } from '../../src/oauth/discovery.js';
import { makeHome, type Home } from '../helpers/cli.js';
import { listFiles } from '../helpers/state.js';
import { expectFailure } from './helpers.js';
import { scaled } from '../helpers/time.js';

/**
 * A port on 127.0.0.1 that accepts no more connections: a child process listens with a backlog of one and then
 * blocks its event loop, and the queue is filled. A new connection then waits for a SYN-ACK that never comes.
 */
async function blackhole(): Promise<{ port: number; close(): void }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('net').createServer();
       s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         process.stdout.write(s.address().port + '\\n');
         setTimeout(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000), 50);
       });`,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const port = Number(await new Promise<string>((resolve) => child.stdout!.once('data', (d) => resolve(String(d)))));
  await new Promise((resolve) => setTimeout(resolve, 150));
  const fillers: net.Socket[] = [];
  for (let i = 0; i < 4; i++) {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.on('error', () => {});
    fillers.push(socket);
  }
  // Wait until a probe no longer connects: the queue is full.
  for (let i = 0; i < 50; i++) {
    const connected = await new Promise<boolean>((resolve) => {
      const probe = net.connect({ port, host: '127.0.0.1' });
      probe.on('error', () => resolve(false));
      probe.once('connect', () => resolve(true));
      setTimeout(() => resolve(false), 100);
      fillers.push(probe);
    });
    if (!connected) break;
  }
  return {
    port,
    close() {
      for (const socket of fillers) socket.destroy();
      child.kill('SIGKILL');
    },
  };
}

let silent: Server;
let stalling: Server;
let trickling: Server;
let silentUrl: string;
let stallingUrl: string;
let tricklingUrl: string;
/** The trickling server's body: TRICKLE_BYTES dots, one every TRICKLE_MS (?bytes=n for fewer). */
const TRICKLE_BYTES = 8;
const TRICKLE_MS = 150;
let hole: Awaited<ReturnType<typeof blackhole>>;

beforeAll(async () => {
  silent = createServer(() => {
    /* never answers */
  });
  stalling = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(req.url?.startsWith('/.well-known/') ? '{"issuer":' : 'first part;');
    /* and never more */
  });
  trickling = createServer((req, res) => {
    let left = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('bytes') ?? TRICKLE_BYTES);
    res.writeHead(200, { 'content-type': 'text/plain' });
    const drip = () => {
      res.write('.');
      if (--left > 0) setTimeout(drip, TRICKLE_MS);
      else res.end();
    };
    drip();
  });
  await Promise.all([silent, stalling, trickling].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  stallingUrl = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
  tricklingUrl = `http://127.0.0.1:${(trickling.address() as AddressInfo).port}`;
  hole = await blackhole();
});
afterAll(async () => {
  hole?.close();
  for (const server of [silent, stalling, trickling]) server.closeAllConnections();
  await Promise.all([silent, stalling, trickling].map((s) => new Promise((resolve) => s.close(resolve))));
});

function http(
  timeouts: { connectTimeoutMs?: number; headersTimeoutMs?: number; bodyTimeoutMs?: number; keepAliveTimeoutMs?: number },
  signal?: AbortSignal,
): Http {
  const io = createIO({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} });
  return createHttp({ io, env: {}, verbose: false, userAgent: 'plat-test', now: Date.now, signal, ...timeouts });
}

async function failure(promise: Promise<unknown>): Promise<{ error: PlatError; ms: number }> {
  const started = Date.now();
  const error = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatError);
  return { error: error as PlatError, ms: Date.now() - started };
}

describe('createHttp deadlines (injected short)', () => {
  it('connect: a host that never completes the handshake fails after the connect deadline (exit 3)', async () => {
    const { error, ms } = await failure(http({ connectTimeoutMs: 300 }).request({ method: 'GET', url: new URL(`http://127.0.0.1:${hole.port}/`) }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(ExitCode.network);
    expect(error.message).toMatch(/Could not reach http:\/\/127\.0\.0\.1:\d+: the connection timed out/);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('headers: a server that accepts and never answers fails after the headers deadline (exit 3)', async () => {
    const { error, ms } = await failure(http({ headersTimeoutMs: 300 }).request({ method: 'GET', url: new URL(`${silentUrl}/`) }));
    expect(error.exitCode).toBe(ExitCode.network);
    expect(error.message).toMatch(/the server did not answer in time/);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('body: a body that stops fails after the idle deadline; the part that came is delivered first', async () => {
    const response = await http({ bodyTimeoutMs: 300 }).request({ method: 'GET', url: new URL(`${stallingUrl}/data`) });
    expect(response.status).toBe(200);
    const chunks: string[] = [];
    const started = Date.now();
    const error = await new Promise<unknown>((resolve) => {
      response.body.on('data', (c: Buffer) => chunks.push(String(c)));
      response.body.on('error', resolve);
      response.body.on('end', () => resolve(undefined));
    });
    expect(chunks.join('')).toBe('first part;');
    expect((error as { code?: string }).code).toBe('UND_ERR_BODY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('body, on the OAuth path: metadata that stops mid-document is a network failure (exit 3), not "not JSON"', async () => {
    const { fetch } = http({ bodyTimeoutMs: 300 });
    const { error } = await failure(discover({ fetch }, stallingUrl, Date.now()));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/broke off before it was complete \(the server stopped sending the response\)/);
  });

  it('headers, on the OAuth path: discovery against a silent server fails after the deadline (exit 3)', async () => {
    const { fetch } = http({ headersTimeoutMs: 300 });
    const { error } = await failure(discover({ fetch }, silentUrl, Date.now()));
    expect(error.exitCode).toBe(ExitCode.network);
    expect(error.message).toMatch(/did not answer in time/);
  });

  it('Ctrl-C (the abort signal) ends a wait for headers at once, as an interruption (exit 130)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const { error, ms } = await failure(http({}, controller.signal).request({ method: 'GET', url: new URL(`${silentUrl}/`) }));
    expect(error.exitCode).toBe(ExitCode.interrupted);
    expect(ms).toBeLessThan(scaled(2_000, { under: 9_000 }));
  });

  it('without injected deadlines nothing gives up early: 1 s into a silent server, only the request timeout ends the wait', async () => {
    // A deadline shorter than the default does not fire early: 1 s into a silent server, still waiting.
    const pending = http({}).request({ method: 'GET', url: new URL(`${silentUrl}/`), signal: AbortSignal.timeout(1_000) });
    const { error, ms } = await failure(pending);
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(error.message).toMatch(/timed out/);
  });
});

/** How a response body ends: its chunks, and the error it failed with (undefined when it ended whole), and when. */
async function bodyOutcome(body: NodeJS.ReadableStream): Promise<{ text: string; error: unknown; ms: number }> {
  const started = Date.now();
  const chunks: string[] = [];
  const error = await new Promise<unknown>((resolve) => {
    body.on('data', (c: Buffer) => chunks.push(String(c)));
    body.on('error', resolve);
    body.on('end', () => resolve(undefined));
  });
  return { text: chunks.join(''), error, ms: Date.now() - started };
}

describe('one deadline per request (timeoutMs), one timer', () => {
  it('before the headers: the request fails as timed out, at its deadline', async () => {
    const { error, ms } = await failure(http({}).request({ method: 'GET', url: new URL(`${silentUrl}/`), timeoutMs: 300 }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/^The request to http:\/\/127\.0\.0\.1:\d+ timed out\. Check the network, or raise --timeout\.$/);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('after the headers: a body that stops fails with a TimeoutError at the deadline (the part that came delivered first)', async () => {
    const started = Date.now();
    const response = await http({}).request({ method: 'GET', url: new URL(`${stallingUrl}/data`), timeoutMs: 400 });
    expect(response.status).toBe(200);
    const { text, error } = await bodyOutcome(response.body);
    expect(text).toBe('first part;');
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(Date.now() - started).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('a deadline later than the headers deadline still ends the body: the timer is re-armed for it', async () => {
    // The timer first waits for the headers (200 ms); they come at once, and the body stops. When it fires, the
    // request's own deadline (700 ms) takes its place: the body fails then, as timed out, not at 200 ms.
    const started = Date.now();
    const response = await http({ headersTimeoutMs: 200 }).request({ method: 'GET', url: new URL(`${stallingUrl}/data`), timeoutMs: 700 });
    const { error } = await bodyOutcome(response.body);
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    expect(Date.now() - started).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('a body that keeps arriving within the deadline is not cut', async () => {
    const response = await http({ headersTimeoutMs: 100, bodyTimeoutMs: 1_000 }).request({ method: 'GET', url: new URL(`${tricklingUrl}/`), timeoutMs: 5_000 });
    const { text, error, ms } = await bodyOutcome(response.body);
    expect(error).toBeUndefined();
    expect(text).toBe('.'.repeat(TRICKLE_BYTES));
    expect(ms).toBeGreaterThan(TRICKLE_BYTES * TRICKLE_MS * 0.8);
  });
});

describe('the body-idle deadline past the keep-alive timer', () => {
  // With the real figures the socket's keep-alive timer (5 s) says a body has been silent that long, and one timer
  // waits out the rest of the 30 s. Here: 100 ms and 500 ms.
  const timeouts = { keepAliveTimeoutMs: 100, bodyTimeoutMs: 500 };

  it('a body that stops fails after the whole idle deadline, not after the keep-alive timer', async () => {
    const response = await http(timeouts).request({ method: 'GET', url: new URL(`${stallingUrl}/data`) });
    const { text, error, ms } = await bodyOutcome(response.body);
    expect(text).toBe('first part;');
    expect((error as { code?: string }).code).toBe('UND_ERR_BODY_TIMEOUT');
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(scaled(3_000, { under: 9_000 }));
  });

  it('a body silent longer than the keep-alive timer, but never for the idle deadline, arrives whole', async () => {
    // A byte every 150 ms: the 100 ms socket timer fires between bytes, every time, for longer than 500 ms in all.
    const response = await http(timeouts).request({ method: 'GET', url: new URL(`${tricklingUrl}/`) });
    const { text, error, ms } = await bodyOutcome(response.body);
    expect(error).toBeUndefined();
    expect(text).toBe('.'.repeat(TRICKLE_BYTES));
    expect(ms).toBeGreaterThan(500);
  });

  it('the same through the OAuth path (fetch): metadata that stops mid-document is a network failure', async () => {
    const { fetch } = http(timeouts);
    const { error } = await failure(discover({ fetch }, stallingUrl, Date.now()));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/broke off before it was complete \(the server stopped sending the response\)/);
  });
});

describe('Ctrl-C (the client\'s signal) and requests in flight', () => {
  it('ends a body part-way: the reader sees an AbortError, what came is delivered first', async () => {
    const controller = new AbortController();
    const response = await http({}, controller.signal).request({ method: 'GET', url: new URL(`${stallingUrl}/data`) });
    setTimeout(() => controller.abort(), 100);
    const { text, error, ms } = await bodyOutcome(response.body);
    expect(text).toBe('first part;');
    expect((error as Error).name).toBe('AbortError');
    expect(ms).toBeLessThan(scaled(2_000, { under: 9_000 }));
  });

  it('listens on the signal once while requests are in flight, and lets go of it once they are done', async () => {
    const controller = new AbortController();
    const client = http({}, controller.signal);
    const listeners = () => getEventListeners(controller.signal, 'abort').length;
    for (let i = 0; i < 20; i++) {
      const response = await client.request({ method: 'GET', url: new URL(`${tricklingUrl}/?bytes=1`) });
      expect(listeners()).toBe(1);
      await bodyOutcome(response.body);
    }
    const stalled = await client.request({ method: 'GET', url: new URL(`${stallingUrl}/data`) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(listeners(), 'a body still arriving keeps it').toBe(1);
    // The exchange ends when its body closes, which after a destroy waits for the socket to close: on a busy
    // machine that is later than any fixed wait. The listener goes one turn of the event loop after that.
    const closed = new Promise((resolve) => stalled.body.once('close', resolve));
    stalled.body.destroy();
    await closed;
    await new Promise((resolve) => setImmediate(resolve));
    // A context the library never closes leaves nothing behind on a signal that outlives it.
    expect(listeners()).toBe(0);
    await client.close();
  });

  it('a request sent after Ctrl-C fails at once as an interruption', async () => {
    const controller = new AbortController();
    controller.abort();
    const { error, ms } = await failure(http({}, controller.signal).request({ method: 'GET', url: new URL(`${tricklingUrl}/`) }));
    expect(error.exitCode).toBe(ExitCode.interrupted);
    expect(ms).toBeLessThan(scaled(1_000, { under: 9_000 }));
  });
});

describe('the built CLI', () => {
  let home: Home;
  afterEach(async () => {
    await home?.cleanup();
  });

  it('gives up connecting after the real 10 s deadline (exit 3, a sentence), storing nothing', async () => {
    home = await makeHome();
    const started = Date.now();
    const result = await home.run(['discover', '--base-url', `http://127.0.0.1:${hole.port}`], { timeoutMs: scaled(30_000) });
    const ms = Date.now() - started;
    expectFailure(result, 3, /Could not reach http:\/\/127\.0\.0\.1:\d+: the connection timed out\. Check the base URL and your network/);
    expect(ms).toBeGreaterThanOrEqual(9_500);
    expect(ms).toBeLessThan(20_000);
    expect(await listFiles(home.configDir)).toEqual([]);
  }, scaled(40_000));

  it.each([
    ['a host that never completes the handshake', () => `http://127.0.0.1:${hole.port}/api/x`],
    ['a server that never answers', () => `${silentUrl}/api/x`],
  ])('plat call --timeout 1 against %s: exit 3 within seconds', async (_what, url) => {
    home = await makeHome();
    const started = Date.now();
    const result = await home.run(['call', 'GET', url(), '--timeout', '1']);
    expectFailure(result, 3, /timed out/);
    expect(Date.now() - started).toBeLessThan(scaled(6_000, { under: 9_500 }));
    expect(await listFiles(home.configDir)).toEqual([]);
  });
});
