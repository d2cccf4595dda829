/**
 * Ctrl-C (SIGINT) during every wait plat has: for the server (each endpoint, stalled on purpose), for the person
 * (consent, a pasted address, a secret on stdin), for another plat (the profile lock), and for time (a retry's
 * back-off). Each: exit 130 promptly, a word on stderr and no stack trace, the callback listener closed, the lock
 * released, and the session files exactly as they were (nothing half-written).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/store/lock.js';
import { platBin, type PlatResult } from '../helpers/cli.js';
import { AUTHORIZE_URL, redirectPort, signIn } from '../helpers/consent.js';
import { exists, listFiles, lockPath, profilePath, sessionBytes, tokenPath } from '../helpers/state.js';
import { expectFailure, portOpen, sleep, until } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome();

interface Running {
  child: ChildProcess;
  stderr(): string;
  done: Promise<PlatResult>;
}

function start(args: string[], options: { keepStdinOpen?: boolean; env?: NodeJS.ProcessEnv } = {}): Running {
  const child = spawn(process.execPath, [platBin, ...args], { env: { ...(home.env as NodeJS.ProcessEnv), ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin!.on('error', () => {});
  if (!options.keepStdinOpen) child.stdin!.end();
  const done = new Promise<PlatResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, stderr: () => stderr, done };
}

/**
 * The environment that makes a plat started with it create `marker` once it listens for SIGINT (a probe Node loads
 * first, through NODE_OPTIONS). Before that, a SIGINT kills the process outright (no exit code at all): a test that
 * sends one must wait for this, not for a guess at how long plat takes to start.
 */
async function markWhenListeningForSigint(marker: string): Promise<NodeJS.ProcessEnv> {
  const probe = path.join(home.dir, 'probe-sigint.cjs');
  await writeFile(
    probe,
    [
      'const on = process.on;',
      'process.on = function (event, listener) {',
      `  if (event === 'SIGINT') require('node:fs').writeFileSync(${JSON.stringify(marker)}, '');`,
      '  return on.call(this, event, listener);',
      '};',
    ].join('\n'),
  );
  return { NODE_OPTIONS: `--require ${JSON.stringify(probe)}` };
}

/** A server route that never answers, and says when a request has arrived. */
function stall(path: string): () => boolean {
  let arrived = false;
  platform.override(path, () => {
    arrived = true;
    return true;
  });
  return () => arrived;
}

/** Interrupts `run` once `ready` holds (plus a moment, so plat is really waiting), and checks how it ended. */
async function interrupt(run: Running, ready: () => boolean | Promise<boolean>, what: string): Promise<PlatResult> {
  await until(ready, what, scaled(15_000));
  await sleep(150);
  const sent = Date.now();
  run.child.kill('SIGINT');
  const result = await run.done;
  // main.ts ends a flow that ignores the abort after 3 s, silently: every wait here must notice it sooner.
  expect(Date.now() - sent, 'plat must end promptly after Ctrl-C').toBeLessThan(scaled(1_500, { under: 3_000 }));
  expectFailure(result, 130, /Interrupted\.|Login cancelled\./, { stdout: true });
  expect(await exists(lockPath(home)), 'the lock is released').toBe(false);
  expect((await listFiles(home.configDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  return result;
}

/** A login interrupted while waiting for `path`: nothing stored, the listener closed. */
async function interruptedLogin(
  path: string | undefined,
  args: string[] = [],
  options: { approve?: boolean; keepStdinOpen?: boolean; ready?: (stderr: string) => boolean } = {},
) {
  const before = await sessionBytes(home);
  const arrived = path ? stall(path) : () => true;
  const run = start(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { keepStdinOpen: options.keepStdinOpen });
  let approved = false;
  const ready = async () => {
    const url = AUTHORIZE_URL.exec(run.stderr())?.[1];
    if (url && options.approve && !approved) {
      approved = true;
      void platform.approve(url).then((cb) => fetch(cb).then((r) => r.text()).catch(() => undefined), () => undefined);
    }
    if (options.ready) return options.ready(run.stderr());
    return (!options.approve || approved) && arrived() && (path !== undefined || url !== undefined);
  };
  const result = await interrupt(run, ready, `plat waiting on ${path ?? 'consent'}`);
  expect(await sessionBytes(home)).toEqual(before);
  const url = AUTHORIZE_URL.exec(result.stderr)?.[1];
  if (url) expect(await portOpen(redirectPort(url)), 'the callback listener is closed').toBe(false);
  return result;
}

describe('Ctrl-C during plat login', () => {
  it.each([
    ['the protected-resource metadata', '/.well-known/oauth-protected-resource'],
    ['the authorization server metadata', '/.well-known/oauth-authorization-server'],
    ['the registration', '/api/oauth/register'],
  ])('waiting for %s: exit 130, nothing stored', async (_what, path) => {
    await interruptedLogin(path);
  });

  it('waiting for consent: exit 130, the listener closed, nothing stored', async () => {
    const result = await interruptedLogin(undefined);
    expect(result.stderr).toMatch(AUTHORIZE_URL);
  });

  it('waiting for a pasted address on an open stdin: exit 130, nothing stored', async () => {
    await interruptedLogin(undefined, [], { keepStdinOpen: true });
  });

  it('waiting for the client secret on stdin (--client-secret-stdin): exit 130 before anything opens', async () => {
    const started = Date.now();
    const result = await interruptedLogin(undefined, ['--client-id', platform.preRegistered.confidentialClientId, '--client-secret-stdin'], {
      keepStdinOpen: true,
      ready: () => Date.now() - started > 700,
    });
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
  });

  it.each([
    ['the token endpoint (the code was sent)', '/api/oauth/token'],
    ['UserInfo (the tokens are in hand, not stored)', '/api/oauth/userinfo'],
  ])('after consent, waiting for %s: exit 130, nothing stored', async (_what, path) => {
    // UserInfo is asked only for tokens not bound to the API: an API publishing no RFC 9728 document.
    if (path === '/api/oauth/userinfo') platform.knobs.protectedResourceMetadata = 'missing';
    await interruptedLogin(path, [], { approve: true });
  });

  it('a step-up interrupted after consent keeps the session it had', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const before = await sessionBytes(home);
    const arrived = stall('/api/oauth/token');
    const run = start(['login', '--no-browser', '--add-scope', 'students:read']);
    let approved = false;
    await interrupt(
      run,
      () => {
        const url = AUTHORIZE_URL.exec(run.stderr())?.[1];
        if (url && !approved) {
          approved = true;
          void platform.approve(url).then((cb) => fetch(cb).then((r) => r.text()).catch(() => undefined), () => undefined);
        }
        return arrived();
      },
      'the token request',
    );
    expect(await sessionBytes(home)).toEqual(before);
  });
});

describe('Ctrl-C with a session', () => {
  beforeEach(async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    platform.stats.reset();
  });

  async function interruptedCommand(args: string[], ready: () => boolean | Promise<boolean>, what: string) {
    const before = await sessionBytes(home);
    const result = await interrupt(start(args), ready, what);
    expect(await sessionBytes(home), 'the session files are exactly as before').toEqual(before);
    return result;
  }

  it('plat refresh waiting for the token endpoint: the session untouched, and refresh works afterwards', async () => {
    await interruptedCommand(['refresh'], stall('/api/oauth/token'), 'the refresh request');
    platform.clearOverrides();
    expect((await home.run(['refresh'])).code).toBe(0);
  });

  it('plat refresh waiting for the lock another plat holds: exit 130, the other holder unaffected', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const holder = withProfileLock(home.configDir, 'default', async () => {
      holding = true;
      await held;
    });
    try {
      const before = await sessionBytes(home);
      const listening = path.join(home.dir, 'listening-for-sigint');
      const run = start(['refresh'], { env: await markWhenListeningForSigint(listening) });
      await until(() => holding, 'the lock');
      // plat's Ctrl-C handler in place (a busy machine once sent the SIGINT before it, and the process was killed
      // outright), then a moment for it to reach the lock: a Ctrl-C before the wait ends it as promptly.
      await until(() => exists(listening), "plat's Ctrl-C handler");
      await sleep(400);
      const sent = Date.now();
      run.child.kill('SIGINT');
      const result = await run.done;
      expect(Date.now() - sent, 'the wait for the lock ends at once').toBeLessThan(scaled(1_500, { under: 3_000 }));
      expectFailure(result, 130, /Interrupted\./);
      expect(await sessionBytes(home)).toEqual(before);
      expect(await exists(lockPath(home)), 'the holder still holds it').toBe(true);
    } finally {
      release();
      await holder;
    }
    expect(await exists(lockPath(home))).toBe(false);
  });

  it('plat whoami waiting for UserInfo', async () => {
    // UserInfo is asked only for tokens not bound to the API: signed in again without the RFC 9728 document.
    platform.knobs.protectedResourceMetadata = 'missing';
    expect((await home.run(['discover', '--refresh'])).code).toBe(0);
    await signIn(home, platform, ['--scope', 'courses:read']);
    await interruptedCommand(['whoami'], stall('/api/oauth/userinfo'), 'UserInfo');
  });

  it('plat logout waiting for the revocation endpoint: still logged in (nothing forgotten half-way)', async () => {
    await interruptedCommand(['logout'], stall('/api/oauth/revoke'), 'the revocation');
    expect((await home.run(['token'])).code).toBe(0);
  });

  it('plat call waiting for the response headers', async () => {
    await interruptedCommand(['call', 'GET', '/api/slow'], stall('/api/slow'), 'the API');
  });

  it('plat call while the body streams: what arrived is on stdout, then exit 130', async () => {
    let sent = false;
    platform.override('/api/stream', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('the first part;');
      sent = true;
      return true;
    });
    const result = await interruptedCommand(['call', 'GET', '/api/stream'], () => sent, 'the first part');
    expect(result.stdout).toBe('the first part;');
  });

  it('plat call during a retry back-off (503, Retry-After: 20)', async () => {
    let calls = 0;
    platform.override('/api/busy', (_req, res) => {
      calls++;
      res.writeHead(503, { 'retry-after': '20', 'content-type': 'application/json' });
      res.end('{"busy":true}');
      return true;
    });
    await interruptedCommand(['call', 'GET', '/api/busy'], () => calls > 0, 'the first 503');
    expect(calls).toBe(1);
  });

  it('plat call refreshing an expired token, waiting for the token endpoint', async () => {
    // The stored expiry says "expired" (session and profile alike): plat refreshes before the call.
    const session = JSON.parse(await readFile(tokenPath(home), 'utf8'));
    const profile = JSON.parse(await readFile(profilePath(home), 'utf8'));
    const expiresAt = Date.now() - 1_000;
    await writeFile(tokenPath(home), JSON.stringify({ ...session, expiresAt }));
    await writeFile(profilePath(home), JSON.stringify({ ...profile, expiresAt }));
    await interruptedCommand(['call', 'GET', '/api/courses'], stall('/api/oauth/token'), 'the refresh request');
  });
});
