/**
 * The browser runs on another machine (SSH, a container, WSL): plat reads stdin while it waits, and the address
 * the browser ended on, pasted there, completes the login with the same state, iss and PKCE checks as the listener.
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../../helpers/cli.js';
import { approving, authorizeUrls, param, paste, redirectPort } from '../../helpers/consent.js';
import { sessionFiles } from '../../helpers/state.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

/** An SSH session on a machine without a display: no PLAT_BROWSER, no BROWSER, no DISPLAY. */
const SSH_SESSION = { SSH_CONNECTION: '203.0.113.7 50022 192.0.2.10 22', SSH_TTY: '/dev/pts/4', DISPLAY: undefined, WAYLAND_DISPLAY: undefined };

/** A real callback address from an earlier login attempt that was abandoned (Ctrl-C) after consent. */
async function abandonedCallback(): Promise<string> {
  let callback: string | undefined;
  const consent = approving(platform, {
    firstOnly: true,
    deliver: (cb, child) => {
      callback = cb;
      child.kill('SIGINT');
    },
  });
  const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: consent.onStderr });
  expect(result.code).toBe(130);
  expect(callback).toMatch(/\/callback\?code=/);
  return callback!;
}

describe('a browser on another machine', () => {
  it('in an SSH session plat opens nothing, explains the paste and ssh -L, and one pasted address completes the login', async () => {
    const approval = approving(platform, { deliver: paste });
    const result = await home.run(['login', '--base-url', platform.baseUrl, '--scope', 'openid profile email courses:read'], {
      env: SSH_SESSION,
      keepStdinOpen: true,
      onStderr: approval.onStderr,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${platform.baseUrl} as Ada Lovelace`);
    expect(result.stderr).toContain('Not opening a browser: this is an SSH session without a display.');
    expect(result.stderr).not.toMatch(/Could not open a browser/);
    const port = redirectPort(approval.urls[0]!);
    expect(result.stderr).toContain(`goes to http://127.0.0.1:${port}/callback?…`);
    expect(result.stderr).toMatch(/paste it here and press Enter/);
    expect(result.stderr).toContain(`ssh -L ${port}:127.0.0.1:${port} <this host>`);
    expect(result.stderr).toContain(`plat login --port ${port}`);
    expect(approval.urls).toHaveLength(1);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(JSON.parse(call.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
  });

  it('--no-browser explains the same, and the pasted address also works wrapped in quotes and spaces', async () => {
    const approval = approving(platform, { deliver: (cb, child) => {
      child.stdin!.write(`   "${cb}"  \n`);
    } });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { keepStdinOpen: true, onStderr: approval.onStderr });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/Not opening a browser/);
    expect(result.stderr).toMatch(/If your browser runs on another machine/);
    expect(result.stderr).toMatch(/ssh -L \d+:127\.0\.0\.1:\d+/);
  });

  it('a browser command that fails says so and explains the paste', async () => {
    const approval = approving(platform, { deliver: paste });
    const result = await home.run(['login', '--base-url', platform.baseUrl], {
      env: { PLAT_BROWSER: '/nonexistent/browser --new-window' },
      keepStdinOpen: true,
      onStderr: approval.onStderr,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Could not open a browser \(\/nonexistent\/browser: /);
    expect(result.stderr).toMatch(/paste it here and press Enter/);
  });

  it('refuses a stale paste, a forged one and other addresses with a hint, keeps waiting, and completes with the real one', async () => {
    const stale = await abandonedCallback();
    platform.stats.reset();
    let authorizeUrl = '';
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], {
      keepStdinOpen: true,
      onStderr: (stderr, child) => {
        const url = authorizeUrls(stderr)[0];
        if (!url || authorizeUrl) return;
        authorizeUrl = url;
        void (async () => {
          const real = new URL(await platform.approve(url));
          const forged = new URL(real);
          forged.searchParams.set('state', 'guessed-state');
          const elsewhere = new URL(real);
          elsewhere.hostname = 'localhost';
          for (const line of ['not a url', stale, forged.href, elsewhere.href, authorizeUrl]) child.stdin!.write(`${line}\n`);
          await new Promise((r) => setTimeout(r, 300));
          child.stdin!.write(`${real.href}\n`);
        })();
      },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/That is not a URL/);
    // the abandoned attempt listened on another port; the forged state is on this one
    expect(result.stderr).toMatch(/That address is from another login attempt \(port \d+; this one waits on port \d+\)/);
    expect(result.stderr).toMatch(/does not belong to this login \(its state does not match/);
    expect(result.stderr).toMatch(/That is not plat's callback address/);
    expect(result.stderr).toMatch(/That is the server's page, not where the browser ended/);
    // neither the stale code nor the forged one was ever sent to the token endpoint
    expect(platform.stats.count('token:authorization_code')).toBe(1);
  });

  it('a pasted address with this login\'s state but another issuer is refused like the listener does (exit 4), nothing stored', async () => {
    const approval = approving(platform, { deliver: (cb, child) => {
      const bad = new URL(cb);
      bad.searchParams.set('iss', 'https://evil.example');
      child.stdin!.write(`${bad.href}\n`);
    } });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { keepStdinOpen: true, onStderr: approval.onStderr });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/iss mismatch/);
    expectCleanError(result);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('a code from another attempt, pasted with this login\'s state, fails the PKCE exchange (exit 4), nothing stored', async () => {
    const stale = new URL(await abandonedCallback());
    platform.stats.reset();
    let sent = false;
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], {
      keepStdinOpen: true,
      onStderr: (stderr, child: ChildProcess) => {
        const url = authorizeUrls(stderr)[0];
        if (!url || sent) return;
        sent = true;
        // the other attempt's code on this listener's address, with this attempt's state: only PKCE (and the
        // redirect_uri binding) can tell them apart
        const spliced = new URL(`http://127.0.0.1:${redirectPort(url)}/callback`);
        spliced.search = stale.search;
        spliced.searchParams.set('state', param(url, 'state')!);
        child.stdin!.write(`${spliced.href}\n`);
      },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/did not accept the sign-in code \(invalid_grant\)/);
    expectCleanError(result);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('ignores end-of-file on stdin (</dev/null): it keeps waiting and the listener completes the login', async () => {
    const approval = approving(platform, { deliver: async (cb) => {
      await new Promise((r) => setTimeout(r, 500));
      await fetch(cb).then((r) => r.text());
    } });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { stdin: '', onStderr: approval.onStderr });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/warning/);
  });

  it('with </dev/null and no answer it ends at --timeout, not at end-of-file', async () => {
    const started = Date.now();
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--timeout', '2'], { stdin: '' });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/No answer from the browser within 2 s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });
});
