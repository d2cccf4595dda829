/**
 * plat api's own habits from gh api: --silent reads the response and prints no body (the exit code and -i's head
 * still say how it went), and refuses the flags that would shape a body it does not print.
 */
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

async function loggedIn() {
  const result = await home.login(platform, ['--scope', 'courses:read']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

describe('plat api --silent', () => {
  it('sends the request and prints no body; a failure still exits non-zero with its sentence', async () => {
    await loggedIn();
    const ok = await home.run(['api', '/api/echo', '--silent', '-f', 'title=Algebra']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('');
    expect(platform.stats.count('POST /api/echo')).toBe(1);
    const failed = await home.run(['api', '/api/status/404', '--silent']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain('HTTP 404');
    expectCleanError(failed);
  });

  it('with -i prints the status line and headers, still no body', async () => {
    await loggedIn();
    const result = await home.run(['api', '/api/echo', '--silent', '-i']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(result.stdout).toMatch(/\ncontent-type: application\/json/);
    expect(result.stdout).not.toContain('"method"');
  });

  it('with --jq or --paginate is a usage error (exit 2), nothing sent', async () => {
    await loggedIn();
    for (const flags of [['--jq', '.method'], ['--paginate']]) {
      const result = await home.run(['api', '/api/echo', '--silent', ...flags]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`--silent prints no body, so ${flags[0]} has nothing to shape.`);
      expectCleanError(result);
    }
    expect(platform.stats.count('GET /api/echo')).toBe(0);
  });
});
