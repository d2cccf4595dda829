/**
 * What a person meets in a week with plat (issue 17), through the built CLI: advice for a wrong base URL, hints
 * that carry the profile and work as printed, what login says around the authorization address, and help text.
 */
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { signIn } from '../helpers/consent.js';
import { APPROVING_BROWSER } from '../helpers/login.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

describe('a wrong base URL', () => {
  it('with a path under a platform: the origin\'s own documents name it, as MCP servers publish them (issue 43)', async () => {
    // The path-inserted addresses have nothing; the origin's protected-resource document (its resource the origin,
    // a path prefix of the base URL) and the server it names are used.
    const result = await home.run(['discover', '--base-url', `${platform.baseUrl}/api`]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Resource +${platform.baseUrl}$`, 'm'));
    expect(result.stdout).toMatch(new RegExp(`^Issuer +${platform.baseUrl}$`, 'm'));
  });

  it('with a path where no address has metadata: no platform metadata at that address, try the origin (not "try again later")', async () => {
    platform.override('/.well-known/', (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return true;
    });
    const result = await home.run(['login', '--no-browser', '--base-url', `${platform.baseUrl}/api`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: There is no platform at ${platform.baseUrl}/api: it publishes no sign-in metadata (HTTP 404 for its OAuth and OpenID Connect discovery documents). ` +
        `Check the base URL; a platform's address usually has no path (try --base-url ${platform.baseUrl}).\n`,
    );
    expect((await home.run(['discover', '--base-url', `${platform.baseUrl}/api`])).stderr).toMatch(/There is no platform at .*\/api/);
  });

  it('an origin that publishes no metadata: no platform there, and plat discover to see what an address publishes', async () => {
    platform.override('/.well-known/', (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return true;
    });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: There is no platform at ${platform.baseUrl}: it publishes no sign-in metadata (HTTP 404 for its OAuth and OpenID Connect discovery documents). ` +
        'Check the base URL (plat discover --base-url <url> shows what an address publishes).\n',
    );
  });

  it('https against a plain-HTTP server: the server does not speak TLS, and the http:// address to try', async () => {
    const https = platform.baseUrl.replace('http://', 'https://');
    const result = await home.run(['discover', '--base-url', https]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `error: ${https} does not speak TLS (https): the server there answers plain HTTP. Check the base URL's scheme and port (for a server on this machine: ${platform.baseUrl}).\n`,
    );
    expectCleanError(result);
  });
});

describe('hints that act on the same session', () => {
  it('whoami with a rejected PLAT_TOKEN blames PLAT_TOKEN, as call does, instead of suggesting plat login', async () => {
    const result = await home.run(['whoami', '--base-url', platform.baseUrl], { env: { PLAT_TOKEN: 'not-a-valid-token' } });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/The server rejected PLAT_TOKEN \(HTTP 401/);
    expect(result.stderr).not.toMatch(/plat login/);
  });

  it('--timeout suggests the same login again, with its profile, base URL and scopes', async () => {
    const result = await home.run(['login', '--no-browser', '--profile', 'work', '--base-url', platform.baseUrl, '--scope', 'courses:read', '--timeout', '1']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      `No answer from the browser within 1 s. Run plat login --profile work --base-url ${platform.baseUrl} --scope courses:read again (add --timeout <seconds> if you need longer than 1).`,
    );
  });
});

describe('what login says around the authorization address', () => {
  it('when plat opened the browser: "Opened this address", no instructions for pasting', async () => {
    const result = await home.run(['login', '--base-url', platform.baseUrl], { env: { PLAT_BROWSER: APPROVING_BROWSER } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^Opened this address in your browser to sign in:\n {2}http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/m);
    expect(result.stderr).not.toMatch(/Open this address in a browser/);
    expect(result.stderr).not.toMatch(/paste it here/);
  });

  it('when it did not (--no-browser): "Open this address", how to finish, and no claim that a browser is waiting', async () => {
    const { result } = await signIn(home, platform);
    expect(result.stderr).toMatch(/^Open this address in a browser to sign in:\n/m);
    expect(result.stderr).toMatch(/paste it here and press Enter/);
    expect(result.stderr).not.toMatch(/Waiting for you to approve in the browser/);
    expect(result.stderr).not.toMatch(/Opened this address/);
  });

  it("prints login's whole result on stdout, and only progress on stderr", async () => {
    const { result } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(result.stdout).toMatch(
      new RegExp(`^Logged in to ${platform.baseUrl.replace(/\./g, '\\.')} as Ada Lovelace <ada@example\\.test>\\nScopes: openid profile email courses:read\\nToken expires in \\d+ minutes \\(.+\\); stored in .+\\.\\n$`),
    );
    expect(result.stderr).not.toMatch(/Logged in|Scopes:|Token expires/);
  });
});

describe("the browser's page after approval", () => {
  it('names the platform as the server names itself, made safe: escaped HTML, no control characters', async () => {
    platform.override('/.well-known/oauth-protected-resource', (_req, res) => {
      const doc = { resource: platform.baseUrl, authorization_servers: [platform.issuer], resource_name: '<b>Evil</b> \u001b[31mSchool\u0007' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      return true;
    });
    let page = '';
    const result = await home.login(platform, ['--profile', 'work'], {
      callback: async (url) => {
        page = await (await fetch(url)).text();
      },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(page).toContain('Signed in to &lt;b&gt;Evil&lt;/b&gt;');
    expect(page).not.toContain('<b>Evil');
    expect(page).not.toMatch(/[\u0000-\u0008\u001b]/);
    expect(page).toContain('in the profile work.');
  });
});

describe('help', () => {
  it('shows the --timeout default without quotes', async () => {
    const result = await home.run(['login', '--help']);
    expect(result.stdout.replace(/\s+/g, " ")).toMatch(/--timeout <seconds> how long to wait for approval in the browser \(default: 300\)/);
    expect(result.stdout).not.toMatch(/default: "300"/);
  });

  it('documents switch, status <profile> and logout --forget', async () => {
    expect((await home.run(['switch', '--help'])).stdout).toMatch(/Usage: plat switch \[options\] <profile>/);
    expect((await home.run(['status', '--help'])).stdout).toMatch(/Usage: plat status \[options\] \[profile\]/);
    expect((await home.run(['logout', '--help'])).stdout).toMatch(/--forget\s+also delete the profile/);
  });
});
