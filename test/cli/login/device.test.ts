/**
 * plat login --device (RFC 8628) against the reference platform's own device flow (oidc-provider): the code shown on
 * stderr is typed into the platform's verification page and approved there, headless over HTTP, while plat polls.
 * Every answer the token endpoint gives a poll is met: authorization_pending (waits), slow_down (five seconds more),
 * access_denied and expired_token (exit 4, each its own sentence); Ctrl-C exits 130 at once; --timeout bounds it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { expectCleanError } from '../../helpers/cli.js';
import { readProfile, readStoredSession, sessionFiles } from '../../helpers/state.js';
import { useHome, usePlatform } from '../../helpers/platform.js';
import { startPlatform } from '../../platform/index.mjs';
import { scaled } from '../../helpers/time.js';

const platform = usePlatform();
const home = useHome();

/** The verification address and the user code plat printed, once both are on stderr. */
function shown(stderr: string): { uri: string; code: string } | undefined {
  const uri = /^ {2}(http\S+)$/m.exec(stderr)?.[1];
  const code = /enter the code: +(\S+)/.exec(stderr)?.[1];
  return uri && code ? { uri, code } : undefined;
}

/** plat login --device, with `act` run once the code is on stderr (a person typing it into the platform's page). */
function deviceLogin(args: string[], act: (shown: { uri: string; code: string }, child: ChildProcess) => Promise<unknown> | void, options: { timeoutMs?: number } = {}) {
  let acted = false;
  const outcome: { error?: Error; shown?: { uri: string; code: string } } = {};
  const run = home.run(['login', '--device', '--no-browser', '--base-url', platform.baseUrl, ...args], {
    timeoutMs: options.timeoutMs ?? scaled(30_000),
    onStderr: (stderr, child) => {
      const seen = shown(stderr);
      if (!seen || acted) return;
      acted = true;
      outcome.shown = seen;
      void Promise.resolve(act(seen, child)).catch((error: Error) => (outcome.error = error));
    },
  });
  return run.then((result) => ({ result, ...outcome }));
}

describe('plat login --device', () => {
  it('shows the address, its host on a line of its own and the code; approved on the platform, the session works as after a browser login', async () => {
    const { result, shown: seen, error } = await deviceLogin(['--scope', 'courses:read', '--verbose'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(error).toBeUndefined();
    expect(result.code, result.stderr).toBe(0);
    expect(seen!.uri).toBe(`${platform.baseUrl}/api/oauth/device`);
    expect(result.stderr).toContain(`(check that the address is on ${new URL(platform.baseUrl).host})`);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ as Ada Lovelace/);
    expect(result.stdout).toMatch(/Scopes: openid profile email courses:read/);
    // --verbose redacts the device code like every other secret: none of the run's secrets is on stderr
    expect(result.stderr).toMatch(/device_code=\[redacted\]/);
    for (const secret of platform.secrets()) expect(result.stderr).not.toContain(secret);
    expectCleanError(result);
    const profile = await readProfile(home);
    expect(profile).toMatchObject({ loginMethod: 'device', resource: platform.baseUrl, user: { sub: 'user-ada' } });
    // one registration serves both kinds of login: the device grant beside the code grant
    expect(profile.client.grantTypes).toEqual(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    expect(platform.stats.count('register')).toBe(1);
    expect((await readStoredSession(home)).refreshToken).toBeTruthy();
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    expect((await home.run(['refresh'])).code).toBe(0);
    expect((await home.run(['whoami'])).stdout).toMatch(/User\s+Ada Lovelace/);
    // a later --add-scope by device reuses the registration; logout revokes as usual
    const stepUp = await deviceLogin(['--add-scope', 'students:read'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(stepUp.result.code, stepUp.result.stderr).toBe(0);
    // a registration holds a client to its scopes on some servers: asking for more registers anew, as in the browser
    expect(stepUp.result.stderr).toMatch(/registration does not include students:read; registering again/);
    expect(platform.stats.count('register')).toBe(2);
    expect((await readProfile(home)).scopes).toEqual(expect.arrayContaining(['courses:read', 'students:read']));
    expect((await home.run(['logout'])).stdout).toMatch(/revoked at the server/);
  });

  it('a session made with the device flow is told to fix a missing scope with --device (a 403, plat scopes), not with the browser', async () => {
    const { result, error } = await deviceLogin(['--scope', 'courses:read'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(error).toBeUndefined();
    expect(result.code, result.stderr).toBe(0);
    const refused = await home.run(['call', 'GET', '/api/analytics']);
    expect(refused.code, refused.stderr).toBe(5);
    expect(refused.stderr).toContain('Run: plat login --device --add-scope analytics:read');
    const scopes = await home.run(['scopes']);
    expect(scopes.stderr).toContain('To add one: plat login --device --add-scope <scope>');
    // the fix as printed works: by device again, adding the scope, and the call goes through
    const fixed = await deviceLogin(['--add-scope', 'analytics:read'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(fixed.result.code, fixed.result.stderr).toBe(0);
    expect((await home.run(['call', 'GET', '/api/analytics'])).code).toBe(0);
  });

  it('on a server that lists no openid: asks for no identity scope, needs no ID token, and the session works', async () => {
    platform.knobs.metadataOverrides = { scopes_supported: ['courses:read', 'students:read', 'offline_access'] };
    const { result, error } = await deviceLogin(['--scope', 'courses:read'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(error).toBeUndefined();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ \(the server does not say as whom: it issued no ID token\)/);
    expect(result.stdout).not.toMatch(/openid/);
    expectCleanError(result);
    const session = await readStoredSession(home);
    expect(session.idToken).toBeUndefined();
    expect(session.scopes).not.toContain('openid');
    const whoami = await home.run(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/User\s+\(the server does not say\)/);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    expect((await home.run(['refresh'])).code).toBe(0);
    expect((await home.run(['logout'])).stdout).toMatch(/revoked at the server/);
  });

  it('a token response without token_type (as OpenAuth answers) is read as Bearer, said under --verbose; one with a type that is not Bearer is refused, naming the session the server may hold', async () => {
    platform.knobs.tokenResponse = 'no-token-type';
    const untyped = await deviceLogin(['--scope', 'courses:read', '--verbose'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(untyped.result.code, untyped.result.stderr).toBe(0);
    expect(untyped.result.stderr).toMatch(/no token_type \(RFC 6749 §5\.1 requires one\); plat reads it as Bearer/);
    expect((await readStoredSession(home)).tokenType).toBe('Bearer');
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);

    platform.knobs.tokenResponse = 'token-type-mac';
    const typed = await deviceLogin(['--scope', 'courses:read'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(typed.result.code, typed.result.stderr).toBe(1);
    expect(typed.result.stderr).toMatch(/only supports Bearer tokens\..* The server may now hold a session for plat that plat could not store/);
    expectCleanError(typed.result);
  });

  it('a user code is shown when it is printable (spaces inside too), refused when it would drive the terminal', async () => {
    const answerWith = (userCode: string) =>
      platform.override('/api/oauth/device/auth', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ device_code: 'device-code-not-known-here', user_code: userCode, verification_uri: `${platform.baseUrl}/api/oauth/device`, expires_in: 600, interval: 1 }));
        return true;
      });
    answerWith('WDJB MJHT');
    const spaced = await home.run(['login', '--device', '--no-browser', '--base-url', platform.baseUrl]);
    expect(spaced.stderr).toMatch(/enter the code: +WDJB MJHT$/m);
    expect(spaced.code).toBe(4); // the server does not know that device code: the poll ends the login
    expectCleanError(spaced);
    answerWith('AB\u001b[2JCD');
    const hostile = await home.run(['login', '--device', '--no-browser', '--base-url', platform.baseUrl]);
    expect(hostile.code).toBe(1);
    expect(hostile.stderr).toMatch(/^error: The server sent a user code plat cannot show safely/m);
    expect(hostile.stderr).not.toContain('\u001b');
    expectCleanError(hostile);
  });

  describe('a verification address that is not https:// (nor http on loopback) is named, and neither shown nor opened', () => {
    /** The device authorization answer, with these addresses; the device code is one the server does not know. */
    const answering = (addresses: { verification_uri: string; verification_uri_complete?: string }) =>
      platform.override('/api/oauth/device/auth', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ device_code: 'device-code-not-known-here', user_code: 'WDJB-MJHT', ...addresses, expires_in: 600, interval: 1 }));
        return true;
      });
    /** plat login --device with a browser command that records each address it is asked to open (the home's path has a space). */
    const loginOpening = async () => {
      const opened = `${home.dir}/opened`;
      const result = await home.run(['login', '--device', '--base-url', platform.baseUrl], { env: { PLAT_BROWSER: `sh -c 'printf "%s\\n" "$0" >> "${opened}"'` } });
      return { result, opened };
    };

    it('an address on the platform is shown and opened (so the cases below can fail)', async () => {
      const address = `${platform.baseUrl}/api/oauth/device`;
      answering({ verification_uri: address });
      const { result, opened } = await loginOpening();
      expect(result.stderr).toMatch(/^Opened the sign-in page in your browser/m);
      expect(result.stderr).toContain(`  ${address}\n`);
      // The browser is started detached and may write after plat exits: wait for its line.
      while (!existsSync(opened) || !readFileSync(opened, 'utf8').endsWith('\n')) await new Promise((r) => setTimeout(r, 20));
      expect(readFileSync(opened, 'utf8')).toBe(`${address}\n`);
      expect(result.code).toBe(4); // the server does not know that device code: the poll ends the login
    });

    it.each([
      ['javascript:alert(document.cookie)//', 'a javascript: address'],
      ['file:///etc/passwd', 'a file: address'],
      ['plat-evil://approve/WDJB-MJHT', 'a plat-evil: address'],
      ['data:text/html,<script>alert(1)</script>', 'a data: address'],
      ['http://evil.example/device', 'http://evil.example'],
    ])('%s: exit 1, named (%s), not shown, not opened', async (address, named) => {
      answering({ verification_uri: address });
      const { result, opened } = await loginOpening();
      expect(result.code).toBe(1);
      const escaped = named.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      expect(result.stderr).toMatch(new RegExp(`^error: The server sent a verification address that is not https:\\/\\/ \\(${escaped}\\); plat will not show it or send you there\\.$`, 'm'));
      expect(result.stderr).not.toMatch(/\(null\)|alert|passwd|approve|evil\.example\/|WDJB/);
      expect(result.stderr).not.toMatch(/Opened the sign-in page|open this address/);
      expect(existsSync(opened)).toBe(false);
      expectCleanError(result);
    });

    it('a complete address (verification_uri_complete) with another scheme beside a good one: the same', async () => {
      answering({ verification_uri: `${platform.baseUrl}/api/oauth/device`, verification_uri_complete: 'file:///etc/passwd?user_code=WDJB-MJHT' });
      const { result, opened } = await loginOpening();
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: The server sent a verification address that is not https:\/\/ \(a file: address\); plat will not show it or send you there\.$/m);
      expect(result.stderr).not.toMatch(/passwd|WDJB/);
      expect(result.stderr).not.toMatch(/Opened the sign-in page|open this address/);
      expect(existsSync(opened)).toBe(false);
      expectCleanError(result);
    });
  });

  it('a plain browser login later reuses the registration made by the device login', async () => {
    await deviceLogin([], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    const { approving } = await import('../../helpers/consent.js');
    const consent = approving(platform);
    const browser = await home.run(['login', '--no-browser'], { onStderr: consent.onStderr });
    expect(browser.code, browser.stderr).toBe(0);
    expect(platform.stats.count('register')).toBe(1);
  });

  it('slow_down adds five seconds between polls, for this poll and every later one (RFC 8628 §3.5); authorization_pending just waits', async () => {
    platform.knobs.deviceSlowDown = 1;
    const polls: number[] = [];
    let secondPoll!: () => void;
    const polledTwice = new Promise<void>((resolve) => (secondPoll = resolve));
    platform.override('/api/oauth/token', () => {
      polls.push(Date.now());
      if (polls.length === 2) secondPoll();
      return false;
    });
    // Approved once the second poll (authorization_pending) is answered, so a third poll is needed.
    const { result } = await deviceLogin([], async (s) => {
      await polledTwice;
      await platform.approveDevice(s.uri, { userCode: s.code });
    });
    expect(result.code, result.stderr).toBe(0);
    // interval 1 s: the first poll answered slow_down, so each later one is sent 1 + 5 s after the one before. It
    // arrives that far apart less what a busy machine delays one arrival more than the next: a tolerance that grows
    // with the load but stays far above the 1 s a poll back at the old interval would take.
    const gaps = polls.slice(1).map((t, i) => t - polls[i]!);
    expect(gaps).toHaveLength(2);
    const least = 6_000 - scaled(250, { under: 3_000 });
    expect(gaps[0]).toBeGreaterThanOrEqual(least);
    expect(gaps[1]).toBeGreaterThanOrEqual(least);
    expect(platform.stats.count('token:urn:ietf:params:oauth:grant-type:device_code')).toBe(3);
  }, scaled(60_000));

  it('denied on the platform: exit 4 with its own sentence, nothing stored', async () => {
    const { result } = await deviceLogin([], (s) => platform.approveDevice(s.uri, { userCode: s.code, deny: true }));
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/The sign-in was denied on the verification page \(access_denied\)/);
    expectCleanError(result);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('a code the server says expired (expired_token) before the time it gave: exit 4 with the same sentence as plat\'s own clock, naming the login to run again', async () => {
    // The server lets the code live 2 s but tells plat 10 minutes: its expired_token comes first, as it may in
    // earnest (servers count whole seconds from when they made the code).
    platform.knobs.deviceCodeTtl = 2;
    platform.knobs.deviceExpiresIn = 600;
    platform.knobs.deviceExpiredAnswer = 'expired_token';
    const { result } = await deviceLogin([], () => {});
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/The code expires in 10 minutes/);
    // the time it ended is the time the server said so, not the 10 minutes it had announced
    const clock = (ms: number) => `${String(new Date(ms).getHours()).padStart(2, '0')}:${String(new Date(ms).getMinutes()).padStart(2, '0')}`;
    const at = /The code expired before anyone approved it \(at (\d\d:\d\d)\)\. Run plat login --base-url \S+ --device again\./.exec(result.stderr)?.[1];
    expect(at, result.stderr).toBeDefined();
    expect([clock(Date.now() - 60_000), clock(Date.now())]).toContain(at);
    expectCleanError(result);
  });

  it('says when the code expires (from expires_in, in local time) and, once it has, ends at once (exit 4) naming the login to run again, without polling for the server to say so', async () => {
    const clock = (ms: number) => `${String(new Date(ms).getHours()).padStart(2, '0')}:${String(new Date(ms).getMinutes()).padStart(2, '0')}`;
    const before = Date.now();
    const approved = await deviceLogin([], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(approved.result.code, approved.result.stderr).toBe(0);
    const at = /The code expires in 10 minutes, at (\d\d:\d\d)\./.exec(approved.result.stderr)?.[1];
    expect(at, approved.result.stderr).toBeDefined();
    expect([clock(before + 600_000), clock(Date.now() + 600_000)]).toContain(at);

    platform.knobs.deviceCodeTtl = 3;
    platform.stats.reset();
    const started = Date.now();
    const { result } = await deviceLogin([], () => {});
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/The code expires in 3 seconds, at \d\d:\d\d\./);
    expect(result.stderr).toMatch(/The code expired before anyone approved it \(at \d\d:\d\d\)\. Run plat login --device( --base-url \S+)? again\./);
    // plat's own clock ended it, without waiting for the server to say so (the next test: a server that says so
    // first gets the same sentence)
    expect(Date.now() - started).toBeLessThan(scaled(10_000));
    expectCleanError(result);
  });

  it('--timeout bounds the wait (exit 4, naming the command to run again); Ctrl-C ends it at once (exit 130)', async () => {
    const started = Date.now();
    const { result } = await deviceLogin(['--timeout', '2'], () => {});
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/No approval within 2 s\. Run plat login .*--device again/);
    expect(Date.now() - started).toBeLessThan(scaled(10_000));

    let signalled = 0;
    const interrupted = await deviceLogin([], (_s, child) => {
      signalled = Date.now();
      child.kill('SIGINT');
    });
    expect(interrupted.result.code).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(scaled(2_000, { under: 3_000 }));
  });

  it('a server that refuses the default resource (invalid_target) in the device flow: one more code without it, said once, and remembered', async () => {
    platform.knobs.refuseResources = true;
    const { result, error } = await deviceLogin(['--scope', 'courses:read'], (s) => platform.approveDevice(s.uri, { userCode: s.code }));
    expect(error).toBeUndefined();
    expect(result.code, result.stderr).toBe(0);
    // The refusal comes before any code is shown: the person sees one code, and approves once.
    expect(result.stderr.match(/enter the code:/g)).toHaveLength(1);
    expect(result.stderr.match(/does not accept the resource indicator .* \(invalid_target\); signing in without it/g)).toHaveLength(1);
    expect(platform.stats.count('register')).toBe(1); // the client of the first attempt is used again
    expect(await readProfile(home)).toMatchObject({ loginMethod: 'device', resourceRefusedBy: platform.issuer });
    expect((await readProfile(home)).resource).toBeUndefined();
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
  });

  it('a device login with a pre-registered client keeps the port its browser login used (a plain login then asks for it again)', async () => {
    const { freePort } = await import('../../interop/servers.js');
    const port = await freePort();
    const other = await startPlatform({
      clients: [
        {
          client_id: 'both-app',
          grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
          response_types: ['code'],
          redirect_uris: [`http://127.0.0.1:${port}/callback`],
          token_endpoint_auth_method: 'none',
        },
      ],
    });
    try {
      const { signIn } = await import('../../helpers/consent.js');
      const browser = await signIn(home, other, ['--client-id', 'both-app', '--port', String(port)]);
      expect(browser.result.code, browser.result.stderr).toBe(0);
      let acted = false;
      const device = await home.run(['login', '--device', '--no-browser', '--base-url', other.baseUrl, '--client-id', 'both-app'], {
        timeoutMs: scaled(30_000),
        onStderr: (stderr) => {
          const seen = shown(stderr);
          if (!seen || acted) return;
          acted = true;
          void other.approveDevice(seen.uri, { userCode: seen.code });
        },
      });
      expect(device.code, device.stderr).toBe(0);
      expect((await readProfile(home)).client).toMatchObject({ clientId: 'both-app', redirectUris: [`http://127.0.0.1:${port}/callback`] });
      const again = await signIn(home, other, ['--client-id', 'both-app']);
      expect(again.result.code, again.result.stderr).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('the same with a pre-registered client (--client-id): the second code is asked for with that client again', async () => {
    const other = await startPlatform({
      clients: [{ client_id: 'device-app', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], response_types: [], redirect_uris: [], token_endpoint_auth_method: 'none' }],
    });
    try {
      other.knobs.refuseResources = true;
      let acted = false;
      const result = await home.run(['login', '--device', '--no-browser', '--base-url', other.baseUrl, '--client-id', 'device-app'], {
        timeoutMs: scaled(30_000),
        onStderr: (stderr) => {
          const seen = shown(stderr);
          if (!seen || acted) return;
          acted = true;
          void other.approveDevice(seen.uri, { userCode: seen.code });
        },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/does not accept the resource indicator .* \(invalid_target\); signing in without it/);
      expect(other.stats.count('register')).toBe(0);
      expect((await readProfile(home)).client).toMatchObject({ clientId: 'device-app', dynamic: false });
    } finally {
      await other.close();
    }
  });

  it('a --resource the server does not serve: the server refuses it (invalid_target) before any code is shown, with its reason when it gives one', async () => {
    const result = await home.run(['login', '--device', '--no-browser', '--base-url', platform.baseUrl, '--resource', 'https://api.elsewhere.example']);
    expect(result.code).toBe(4); // as the browser flow's refusal of the same --resource (resource.test.ts)
    expect(result.stderr).toMatch(/^error: The server refused the resource indicator \(invalid_target: .+\)\. Check --resource, or sign in without it\.$/m);
    expect(shown(result.stderr)).toBeUndefined();
    expectCleanError(result);
    expect(await sessionFiles(home)).toEqual([]);

    // Without a description, the error code alone.
    platform.override('/api/oauth/device/auth', (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":"invalid_target"}');
      return true;
    });
    const bare = await home.run(['login', '--device', '--no-browser', '--base-url', platform.baseUrl, '--resource', 'https://api.elsewhere.example']);
    expect(bare.code).toBe(4);
    expect(bare.stderr).toMatch(/^error: The server refused the resource indicator \(invalid_target\)\. Check --resource, or sign in without it\.$/m);
    expectCleanError(bare);
  });

  it('a server without the device flow: exit 2 saying so and what works instead, before anything is registered', async () => {
    platform.knobs.metadataOverrides = { device_authorization_endpoint: null };
    const result = await home.run(['login', '--device', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not offer the device flow .*plat login .*--no-browser/);
    expect(platform.stats.count('register')).toBe(0);
  });

  it('--port with --device is a usage error', async () => {
    const result = await home.run(['login', '--device', '--port', '8765', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--device needs none/);
  });

  it('the browser login names --device for a remote shell where the server offers it', async () => {
    const { approving } = await import('../../helpers/consent.js');
    const consent = approving(platform);
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: consent.onStderr });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Or sign in with a code on any device instead: plat login .*--device/);
  });
});
