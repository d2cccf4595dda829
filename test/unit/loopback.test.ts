import net from 'node:net';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode, PlatError } from '../../src/errors.js';
import { CALLBACK_PATH, startLoopback, type Callback, type LoopbackListener } from '../../src/loopback.js';

const STATE = 'st4te-Q9xv2LpZ';
const CODE = 'c0de-Hk73nWq1';
const open: LoopbackListener[] = [];

async function listen(port?: number): Promise<LoopbackListener> {
  const listener = await startLoopback({ expectedState: STATE, port });
  open.push(listener);
  return listener;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

/** Resolves to 'connected' or the error code of a TCP connection attempt. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

/** Records whether a promise has settled, without waiting for it. */
function watch<T>(promise: Promise<T>) {
  const state = { settled: false };
  promise.then(() => (state.settled = true));
  return state;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const callbackUrl = (l: LoopbackListener, state: string, extra = '') => `${l.redirectUri}?code=${CODE}&state=${state}${extra}`;

describe('startLoopback', () => {
  it('listens on a free port of 127.0.0.1 and names the redirect URI', async () => {
    const l = await listen();
    expect(l.port).toBeGreaterThan(0);
    expect(l.redirectUri).toBe(`http://127.0.0.1:${l.port}${CALLBACK_PATH}`);
    expect(await tryConnect('127.0.0.1', l.port)).toBe('connected');
  });

  it('is bound to 127.0.0.1 only: not reachable on ::1 or on the machine\'s other addresses', async () => {
    const l = await listen();
    expect(await tryConnect('::1', l.port)).not.toBe('connected');
    const external = Object.values(os.networkInterfaces())
      .flat()
      .filter((a): a is os.NetworkInterfaceInfo => Boolean(a) && !a!.internal && !a!.address.startsWith('fe80'));
    for (const address of external) {
      expect(await tryConnect(address.address, l.port), address.address).not.toBe('connected');
    }
  });

  it('answers other paths with 404 and non-GET methods with 405, and keeps waiting', async () => {
    const l = await listen();
    const waiting = watch(l.callback);
    const favicon = await fetch(`http://127.0.0.1:${l.port}/favicon.ico`);
    expect(favicon.status).toBe(404);
    const post = await fetch(callbackUrl(l, STATE), { method: 'POST' });
    expect(post.status).toBe(405);
    await tick();
    expect(waiting.settled).toBe(false);
  });

  it('refuses a callback with the wrong state (400) without echoing it, and keeps waiting', async () => {
    const l = await listen();
    const waiting = watch(l.callback);
    const forged = await fetch(`${l.redirectUri}?code=forged-code-777&state=forged-state-888`);
    expect(forged.status).toBe(400);
    const page = await forged.text();
    expect(page).not.toContain('forged-code-777');
    expect(page).not.toContain('forged-state-888');
    const missing = await fetch(`${l.redirectUri}?code=${CODE}`);
    expect(missing.status).toBe(400);
    await tick();
    expect(waiting.settled).toBe(false);
  });

  it('hands over the first right-state callback and shows a page without the code or state', async () => {
    const l = await listen();
    const response = fetch(callbackUrl(l, STATE, '&iss=https%3A%2F%2Fas.example'));
    const cb: Callback = await l.callback;
    expect(cb.url.origin).toBe(`http://127.0.0.1:${l.port}`);
    expect(cb.url.pathname).toBe(CALLBACK_PATH);
    expect(cb.url.searchParams.get('code')).toBe(CODE);
    expect(cb.url.searchParams.get('state')).toBe(STATE);
    expect(cb.url.searchParams.get('iss')).toBe('https://as.example');
    cb.respond({ ok: true, title: 'Signed in', message: 'You can close this tab.' });
    const res = await response;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    expect(html).toContain('Signed in');
    expect(html).not.toContain(CODE);
    expect(html).not.toContain(STATE);
  });

  it('a failed result is a 400 page, and its text is HTML-escaped', async () => {
    const l = await listen();
    const response = fetch(callbackUrl(l, STATE));
    (await l.callback).respond({ ok: false, title: '<script>x</script>', message: 'a & "b"' });
    const res = await response;
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).not.toContain('<script>x</script>');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(html).toContain('a &amp; &quot;b&quot;');
  });

  it('answers a second right-state callback with 409', async () => {
    const l = await listen();
    const first = fetch(callbackUrl(l, STATE));
    const cb = await l.callback;
    const second = await fetch(callbackUrl(l, STATE));
    expect(second.status).toBe(409);
    cb.respond({ ok: true, title: 'Signed in', message: 'Done.' });
    expect((await first).status).toBe(200);
  });

  it('offer() accepts a pasted URL with the right state and resolves the callback with it', async () => {
    const l = await listen();
    const pasted = new URL(callbackUrl(l, STATE));
    expect(l.offer(pasted)).toBe(true);
    const cb = await l.callback;
    expect(cb.url.href).toBe(pasted.href);
    expect(() => cb.respond({ ok: true, title: 't', message: 'm' })).not.toThrow();
    // once delivered, neither a paste nor the browser can deliver again
    expect(l.offer(pasted)).toBe(false);
    expect((await fetch(callbackUrl(l, STATE))).status).toBe(409);
  });

  it('offer() refuses a wrong state or a wrong path and changes nothing', async () => {
    const l = await listen();
    const waiting = watch(l.callback);
    expect(l.offer(new URL(callbackUrl(l, 'not-the-state')))).toBe(false);
    expect(l.offer(new URL(`http://127.0.0.1:${l.port}/other?code=${CODE}&state=${STATE}`))).toBe(false);
    await tick();
    expect(waiting.settled).toBe(false);
    expect(l.offer(new URL(callbackUrl(l, STATE)))).toBe(true);
  });

  it('a busy port is a PlatError naming the port', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen({ port: 0, host: '127.0.0.1' }, resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const error = await startLoopback({ expectedState: STATE, port }).then(
        (l) => {
          open.push(l);
          throw new Error('expected the port to be busy');
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PlatError);
      expect((error as PlatError).exitCode).toBe(ExitCode.failure);
      expect((error as PlatError).message).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('listens on the requested port when it is free', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen({ port: 0, host: '127.0.0.1' }, resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const l = await listen(port);
    expect(l.port).toBe(port);
  });

  it('close() stops listening: a new connection is refused', async () => {
    const l = await startLoopback({ expectedState: STATE });
    expect(await tryConnect('127.0.0.1', l.port)).toBe('connected');
    await l.close();
    expect(await tryConnect('127.0.0.1', l.port)).toBe('ECONNREFUSED');
  });

  it('close() finishes even while a delivered callback was never answered', async () => {
    const l = await startLoopback({ expectedState: STATE });
    const pending = fetch(callbackUrl(l, STATE)).catch((e: unknown) => e);
    await l.callback;
    await l.close();
    expect(await pending).toBeInstanceOf(Error);
    expect(await tryConnect('127.0.0.1', l.port)).toBe('ECONNREFUSED');
  });
});
