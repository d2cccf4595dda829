import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError, type Home } from '../../helpers/cli.js';
import { useHome, usePlatform } from '../../helpers/platform.js';
import { profilePath, sessionFiles } from '../../helpers/state.js';
import { approving } from '../../helpers/consent.js';

const platform = usePlatform();
const home = useHome();

async function expectNothingStored(h: Home) {
  expect(await sessionFiles(h)).toEqual([]);
}

describe('plat login: the happy path', () => {
  it('signs in, prints who and which scopes, and stores the session in 0600 files inside a 0700 dir', async () => {
    const result = await home.login(platform, ['--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${platform.baseUrl} as`);
    expect(result.stdout).toMatch(/Scopes: openid profile email courses:read/);
    expect(result.stderr).toContain('/oauth/authorize?');
    const profile = JSON.parse(await readFile(profilePath(home), 'utf8'));
    expect(profile).toMatchObject({ baseUrl: platform.baseUrl, issuer: platform.issuer, loggedIn: true, tokenStore: 'file' });
    expect((await stat(profilePath(home))).mode & 0o777).toBe(0o600);
    expect((await stat(home.configDir)).mode & 0o777).toBe(0o700);
    const tokenFile = path.join(home.configDir, 'tokens', 'default.json');
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    // the non-secret profile holds no secret
    const profileText = await readFile(profilePath(home), 'utf8');
    for (const secret of platform.secrets()) expect(profileText).not.toContain(secret);
  });

  it('requests openid profile email by default and reads the user from UserInfo', async () => {
    const result = await home.login(platform);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('as Ada Lovelace <ada@example.test>');
    expect(result.stdout).toContain('Scopes: openid profile email');
  });

  it('--json prints a stable JSON shape and nothing else on stdout', async () => {
    const result = await home.login(platform, ['--json', '--scope', 'courses:read,students:read']);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      profile: 'default',
      baseUrl: platform.baseUrl,
      issuer: platform.issuer,
      scopes: expect.arrayContaining(['openid', 'courses:read', 'students:read']),
      tokenStore: 'file',
    });
    expect(typeof json.clientId).toBe('string');
    expect(new Date(json.expiresAt).getTime()).toBeGreaterThan(Date.now());
  });

  it('reuses the registration on the next login, which reads discovery afresh (the cache serves the commands between logins)', async () => {
    expect((await home.login(platform)).code).toBe(0);
    expect(platform.stats.count('register')).toBe(1);
    platform.stats.reset();
    const second = await home.login(platform);
    expect(second.code, second.stderr).toBe(0);
    expect(platform.stats.count('register')).toBe(0);
    // a server that moved is found at login (test/cli/login/servers-move.test.ts), never signed in to from the cache
    expect(platform.stats.count('GET /.well-known/oauth-protected-resource')).toBe(1);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(1);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    platform.stats.reset();
    expect((await home.run(['whoami'])).code).toBe(0);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(0);
  });

  it('remembers the base URL, so the next login needs no flags', async () => {
    expect((await home.login(platform)).code).toBe(0);
    const again = await home.run(['login', '--no-browser'], { onStderr: approving(platform, { firstOnly: true }).onStderr });
    expect(again.code, again.stderr).toBe(0);
  });

  it('keeps profiles apart', async () => {
    expect((await home.login(platform, ['--profile', 'work', '--scope', 'courses:read'])).code).toBe(0);
    const status = await home.run(['status', '--json']);
    const profiles = JSON.parse(status.stdout).profiles;
    expect(profiles.map((p: { profile: string }) => p.profile)).toEqual(['work']);
    const whoami = await home.run(['whoami']);
    expect(whoami.code).toBe(4);
  });
});

describe('plat login: the callback', () => {
  it('ignores a request with a forged state and completes with the real one', async () => {
    let forged: Response | undefined;
    const result = await home.login(platform, [], {
      callback: async (url) => {
        const bad = new URL(url);
        bad.searchParams.set('state', 'forged');
        forged = await fetch(bad);
        expect((await fetch(new URL('/favicon.ico', url))).status).toBe(404);
        await fetch(url);
      },
    });
    expect(forged?.status).toBe(400);
    expect(result.code, result.stderr).toBe(0);
  });

  it('fails with exit 4 when the iss parameter names another server', async () => {
    const result = await home.login(platform, [], {
      callback: async (url) => {
        const bad = new URL(url);
        bad.searchParams.set('iss', 'https://evil.example');
        await fetch(bad);
      },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/iss mismatch/);
    expectCleanError(result);
    await expectNothingStored(home);
  });

  it('fails with exit 4 when iss is missing though the server advertises it', async () => {
    const result = await home.login(platform, [], {
      callback: async (url) => {
        const bad = new URL(url);
        bad.searchParams.delete('iss');
        await fetch(bad);
      },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/"iss"/);
    await expectNothingStored(home);
  });

  it('reports access denied with exit 4 and stores nothing; the page says access was denied, the error how to retry', async () => {
    let page = '';
    const result = await home.login(platform, ['--profile', 'work', '--scope', 'courses:read'], {
      deny: true,
      callback: async (url) => {
        page = await (await fetch(url)).text();
      },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/denied/i);
    // the command carries what this login needs to be repeated as printed: profile, base URL (not remembered yet), scopes
    expect(result.stderr).toContain(`To sign in, run plat login --profile work --base-url ${platform.baseUrl} --scope courses:read and approve.`);
    expect(page).toContain('Access denied');
    expect(page).toContain('You denied plat access to Learning Platform API');
    expectCleanError(result);
    await expectNothingStored(home);
  });

  it('serves the browser a success page without any secret in it', async () => {
    let page = '';
    const result = await home.login(platform, [], {
      callback: async (url) => {
        const response = await fetch(url);
        page = await response.text();
        expect(response.status).toBe(200);
      },
    });
    expect(result.code).toBe(0);
    // it names the platform, the account and the profile
    expect(page).toContain('Signed in to Learning Platform API');
    expect(page).toContain(`plat is signed in to ${platform.baseUrl} as Ada Lovelace &lt;ada@example.test&gt;, in the profile default.`);
    for (const secret of platform.secrets()) expect(page).not.toContain(secret);
  });

  it('accepts the redirect URL pasted on stdin instead of the listener', async () => {
    const consent = approving(platform, {
      firstOnly: true,
      deliver: (cb, child) => {
        child.stdin!.write('not a url\n');
        child.stdin!.write(`${cb.replace(/state=[^&]+/, 'state=stale')}\n`);
        child.stdin!.write(`${cb}\n`);
      },
    });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { keepStdinOpen: true, onStderr: consent.onStderr });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/not a URL/);
    expect(result.stderr).toMatch(/does not belong to this login/);
  });

  it('times out cleanly after --timeout seconds, with nothing stored', async () => {
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--timeout', '1']);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/within 1 s/);
    await expectNothingStored(home);
  });

  it('exits 130 on SIGINT while waiting, with nothing stored', async () => {
    let interrupted = false;
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], {
      onStderr: (stderr, child) => {
        if (stderr.includes('/oauth/authorize?') && !interrupted) {
          interrupted = true;
          child.kill('SIGINT');
        }
      },
    });
    expect(result.code).toBe(130);
    await expectNothingStored(home);
  });
});

describe('plat login: refusals before anything is opened', () => {
  it('refuses a server without PKCE S256, before registering or printing a URL', async () => {
    platform.knobs.codeChallengeMethods = ['plain'];
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/S256/);
    expect(result.stderr).not.toContain('/oauth/authorize');
    expect(platform.stats.count('register')).toBe(0);
    await expectNothingStored(home);
  });

  it('uses S256 with a server that lists no challenge methods', async () => {
    platform.knobs.codeChallengeMethods = null;
    const result = await home.login(platform);
    expect(result.code, result.stderr).toBe(0);
  });

  it('names the close matches of an unknown scope (usage error, exit 2)', async () => {
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:reed']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/"courses:reed" \(did you mean "courses:read"/);
    expect(platform.stats.count('register')).toBe(0);
  });

  it('explains an HTML page where metadata should be (exit 1), storing nothing', async () => {
    platform.knobs.metadata = 'html';
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/found no usable sign-in metadata for .*\(not JSON: text\/html\)/);
    expectCleanError(result);
    await expectNothingStored(home);
  });

  it('refuses metadata whose issuer is not the server asked', async () => {
    platform.knobs.metadata = 'wrong-issuer';
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/different issuer/);
  });

  it('says the server is unreachable with exit 3', async () => {
    const closed: Server = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as import('node:net').AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const result = await home.run(['login', '--no-browser', '--base-url', `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`Could not reach http://127.0.0.1:${port}: the connection was refused`);
    expectCleanError(result);
  });

  it('refuses plain http for a non-loopback base URL (exit 2)', async () => {
    const result = await home.run(['login', '--base-url', 'http://school.example.com']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/https:\/\//);
  });

  it('names a busy --port at once', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as import('node:net').AddressInfo).port;
    try {
      const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--port', String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      await expectNothingStored(home);
    } finally {
      blocker.close();
    }
  });

  it('turns invalid_redirect_uri from registration into a sentence', async () => {
    platform.override('/api/oauth/register', (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_redirect_uri', error_description: 'only loopback redirect URIs may self-register' }));
      return true;
    });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/invalid_redirect_uri: only loopback redirect URIs may self-register/);
    expect(result.stderr).toMatch(/--client-id/);
    await expectNothingStored(home);
  });

  it('reports a registration endpoint that fails with HTTP 500', async () => {
    platform.knobs.registration = 'error-500';
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/registering plat|HTTP 500/);
    expectCleanError(result);
    await expectNothingStored(home);
  });

  it('rejects a bad --port value as a usage error', async () => {
    const result = await home.run(['login', '--base-url', platform.baseUrl, '--port', 'eighty']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port must be a whole number/);
  });
});
