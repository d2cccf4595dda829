/**
 * The callback listener of a running `plat login` as an attack surface, end to end against the built CLI: where it
 * listens, what it does with requests that are not this login's callback, slow and flooding clients, what its
 * pages contain, and that it is gone after the first valid callback. (test/unit/loopback.test.ts covers the
 * listener in-process; this is the same surface as a local attacker meets it.) Loopback only: nothing here
 * connects to an address outside 127.0.0.0/8 and ::1; the socket table tells where plat listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { platBin, type PlatResult } from '../helpers/cli.js';
import { AUTHORIZE_URL, redirectPort } from '../helpers/consent.js';
import { expectConsistent, expectNoSecret, expectSuccess, portOpen, sleep, until } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

/** Once every socket has connected, or been refused (the slow clients are at the listener before the callback). */
const connected = (sockets: net.Socket[]) =>
  Promise.all(
    sockets.map((socket) =>
      socket.connecting ? new Promise((resolve) => ['connect', 'error', 'close'].forEach((event) => socket.once(event, resolve))) : undefined,
    ),
  );

const platform = usePlatform();
const home = useHome();

interface Waiting {
  child: ChildProcess;
  port: number;
  authorizeUrl: string;
  state: string;
  done: Promise<PlatResult>;
  /** Approves consent and returns the real callback address (not requested). */
  approve(): Promise<string>;
}

/** Starts `plat login` and resolves once it waits on its listener. */
async function waitingLogin(): Promise<Waiting> {
  const child = spawn(process.execPath, [platBin, 'login', '--no-browser', '--base-url', platform.baseUrl], {
    env: home.env as NodeJS.ProcessEnv,
    // stdin a pipe, where the address could be pasted: with none of the ways to finish, login stops at once.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<PlatResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  const authorizeUrl = await until(() => AUTHORIZE_URL.exec(stderr)?.[1], 'the authorization URL');
  return {
    child,
    port: redirectPort(authorizeUrl),
    authorizeUrl,
    state: new URL(authorizeUrl).searchParams.get('state')!,
    done,
    approve: () => platform.approve(authorizeUrl),
  };
}

/** A raw HTTP exchange over one socket: whatever the listener answers (or how it drops us). */
function raw(port: number, request: string | Buffer, options: { timeoutMs?: number } = {}): Promise<{ status?: number; text: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    const finish = (error?: string) => {
      socket.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : undefined, text, error });
    };
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.on('error', (e: NodeJS.ErrnoException) => finish(e.code));
    socket.setTimeout(options.timeoutMs ?? 5_000, () => finish('timeout'));
    socket.once('connect', () => socket.write(request));
  });
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`;

/** The listening sockets on `port` in the kernel's tables: [address, family]. Linux only. */
async function listeningOn(port: number): Promise<string[]> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A' && local?.endsWith(`:${hex}`)) found.push(`${table.endsWith('6') ? 'tcp6' : 'tcp'} ${local.split(':')[0]}`);
    }
  }
  return found;
}

describe('the callback listener of a running plat login', () => {
  it.skipIf(process.platform !== 'linux')('listens on 127.0.0.1 only: one IPv4 socket bound to 127.0.0.1, nothing on ::, and no answer on 127.0.0.2 or ::1', async () => {
    const login = await waitingLogin();
    try {
      expect(await listeningOn(login.port)).toEqual(['tcp 0100007F']);
      expect(await expectConsistent(home)).not.toBe('logged-in');
      expect(await portOpen(login.port, '127.0.0.1')).toBe(true);
      expect(await portOpen(login.port, '127.0.0.2')).toBe(false);
      expect(await portOpen(login.port, '::1')).toBe(false);
    } finally {
      login.child.kill('SIGINT');
      await login.done;
    }
  });

  it('refuses every request that is not this login\'s callback, answers every path, and keeps waiting', async () => {
    const login = await waitingLogin();
    const real = new URL(await login.approve());
    const code = real.searchParams.get('code')!;
    const bad = (state: string | null, path = '/callback') => {
      const u = new URL(real);
      u.pathname = path;
      if (state === null) u.searchParams.delete('state');
      else u.searchParams.set('state', state);
      return `${u.pathname}${u.search}`;
    };
    const attempts: Array<[string, string | Buffer, number[]]> = [
      ['no state', get(bad(null)), [400]],
      ['an empty state', get(bad('')), [400]],
      ['a wrong state', get(bad('guess')), [400]],
      ['the state with a suffix', get(bad(`${login.state}x`)), [400]],
      ['the state in another case', get(bad(login.state.toUpperCase() === login.state ? login.state.toLowerCase() : login.state.toUpperCase())), [400]],
      ['the right state on another path', get(bad(login.state, '/callbacks')), [404]],
      ['the right state by POST', `POST ${bad(login.state)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, [405]],
      ['the right state by PUT', `PUT ${bad(login.state)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, [405]],
      ['/', get('/'), [404]],
      ['/favicon.ico', get('/favicon.ico'), [404]],
      ['a traversal', get('/../../../etc/passwd'), [404]],
      ['an encoded NUL', get('/callback%00?state=x'), [400, 404]],
      ['8 kB of path', get(`/${'a'.repeat(8_000)}`), [404]],
      ['non-ASCII bytes', Buffer.concat([Buffer.from('GET /caf'), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]), [400, 404]],
      ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', [404, 405, 400]],
      ['not HTTP at all', '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003garbage\r\n\r\n', [400]],
      ['a header of 100 kB', get('/callback', `X-Big: ${'b'.repeat(100_000)}\r\n`), [431, 400]],
    ];
    const pages: string[] = [];
    for (const [what, request, statuses] of attempts) {
      const answer = await raw(login.port, request);
      expect(statuses, `${what}: got ${answer.status ?? answer.error}`).toContain(answer.status);
      pages.push(answer.text);
    }
    // Still waiting: the real callback completes the login, and its code was exchanged once.
    const page = await fetch(real);
    expect(page.status).toBe(200);
    pages.push(await page.text());
    const result = await login.done;
    expectSuccess(result);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    expect(await expectConsistent(home)).toBe('logged-in');
    // No page it served holds the code, the state or any secret of this run.
    const served = pages.join('\n');
    expectNoSecret(served, [...platform.secrets(), code, login.state], 'the pages of the listener');
  });

  it('survives slow clients that trickle headers (slowloris): the real callback still completes at once', async () => {
    const login = await waitingLogin();
    const slow: net.Socket[] = [];
    let trickling = true;
    for (let i = 0; i < 8; i++) {
      const socket = net.connect({ port: login.port, host: '127.0.0.1' });
      socket.on('error', () => {});
      slow.push(socket);
      void (async () => {
        await new Promise((resolve) => socket.once('connect', resolve));
        const request = `GET /callback?state=${login.state} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `;
        for (const ch of request) {
          if (!trickling || socket.destroyed) return;
          socket.write(ch);
          await sleep(100);
        }
      })();
    }
    await connected(slow);
    try {
      const callback = await login.approve();
      const started = Date.now();
      const page = await fetch(callback);
      expect(page.status).toBe(200);
      await page.text();
      const result = await login.done;
      expect(Date.now() - started, 'the slow clients did not hold plat').toBeLessThan(scaled(3_000));
      expectSuccess(result);
      expect(await expectConsistent(home)).toBe('logged-in');
    } finally {
      trickling = false;
      for (const socket of slow) socket.destroy();
    }
    expect(await portOpen(login.port)).toBe(false);
  });

  it('survives more slow clients than it takes (40 > 32): they are dropped within seconds and the callback completes', async () => {
    const login = await waitingLogin();
    const slow: net.Socket[] = [];
    for (let i = 0; i < 40; i++) {
      const socket = net.connect({ port: login.port, host: '127.0.0.1' });
      socket.on('error', () => {});
      socket.once('connect', () => socket.write('GET /callback HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '));
      slow.push(socket);
    }
    const keepTrickling = setInterval(() => {
      for (const socket of slow) if (!socket.destroyed && socket.writable) socket.write('a');
    }, 500);
    try {
      await connected(slow);
      const callback = await login.approve();
      const started = Date.now();
      // A browser retries a refused connection; so does this one, for up to 15 s.
      let status: number | undefined;
      while (status === undefined && Date.now() - started < 15_000) {
        const answer = await raw(login.port, get(new URL(callback).pathname + new URL(callback).search), { timeoutMs: scaled(15_000) });
        status = answer.status;
        if (status === undefined) await sleep(250);
      }
      expect(status).toBe(200);
      expect(Date.now() - started, 'the slow clients held the listener only for seconds').toBeLessThan(10_000);
      expectSuccess(await login.done);
      expect(await expectConsistent(home)).toBe('logged-in');
    } finally {
      clearInterval(keepTrickling);
      for (const socket of slow) socket.destroy();
    }
  }, scaled(30_000));

  it('survives a flood of 400 forged requests (at most 32 connections at a time, loopback only), then completes', async () => {
    const login = await waitingLogin();
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => raw(login.port, get(`/callback?code=c${round}-${i}&state=forged-${i}`))));
      for (const a of answers) outcomes.set(String(a.status ?? a.error), (outcomes.get(String(a.status ?? a.error)) ?? 0) + 1);
    }
    // Every forged request was refused, or its connection dropped beyond the listener's bound; none was taken.
    for (const key of outcomes.keys()) expect(['400', 'ECONNRESET', 'EPIPE', 'undefined']).toContain(key);
    expect(outcomes.get('400')).toBeGreaterThan(0);
    const rss = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${login.child.pid}/status`, 'utf8').catch(() => 'VmRSS: 0'))?.[1] ?? 0);
    expect(rss, 'plat stays small under the flood (kB)').toBeLessThan(200_000);
    const page = await fetch(await login.approve());
    expect(page.status).toBe(200);
    await page.text();
    expectSuccess(await login.done);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('closes after the first valid callback, even with an idle keep-alive connection open to it', async () => {
    const login = await waitingLogin();
    const idle = net.connect({ port: login.port, host: '127.0.0.1' });
    idle.on('error', () => {});
    await new Promise((resolve) => idle.once('connect', resolve));
    const callback = await login.approve();
    const started = Date.now();
    const first = await fetch(callback);
    expect(first.status).toBe(200);
    await first.text();
    const second = await raw(login.port, get(new URL(callback).pathname + new URL(callback).search));
    expect([409, undefined]).toContain(second.status);
    const result = await login.done;
    expect(Date.now() - started).toBeLessThan(scaled(3_000));
    expectSuccess(result);
    expect(await portOpen(login.port)).toBe(false);
    idle.destroy();
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    expect(await expectConsistent(home)).toBe('logged-in');
  });
});
