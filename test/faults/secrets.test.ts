/**
 * The secret sweep: every command of a full journey with --verbose (and a row of failures, also --verbose), then
 * every file plat wrote — the config dir, HOME, the cache — searched for every code, token, PKCE verifier and
 * client secret the reference platform issued or received in the run (platform.secrets()), whole or in 16-character
 * pieces. The first hit fails. The only output allowed to hold a secret is `plat token`'s stdout, by design; the
 * token file of the file store is where the session lives, and is checked to be the only file that does.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, type Home, type PlatResult } from '../helpers/cli.js';
import { keyring } from '../helpers/components.js';
import { approving } from '../helpers/consent.js';
import { listFiles } from '../helpers/state.js';
import { expectNoSecret, expectNoSecretInFiles } from './helpers.js';
import { usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
let home: Home;

afterEach(async () => {
  await home.cleanup();
});

/** Every output of the run, labelled, for the sweep. */
class Outputs {
  readonly all: Array<{ label: string; text: string }> = [];
  add(label: string, result: PlatResult, options: { stdoutHoldsToken?: boolean } = {}): PlatResult {
    this.all.push({ label: `${label} (stderr)`, text: result.stderr });
    if (!options.stdoutHoldsToken) this.all.push({ label: `${label} (stdout)`, text: result.stdout });
    return result;
  }
  sweep(secrets: string[]): number {
    for (const { label, text } of this.all) expectNoSecret(text, secrets, label);
    return this.all.length;
  }
}

async function journey(h: Home, out: Outputs, env: Record<string, string | undefined> = {}) {
  const run = (label: string, args: string[], options: Parameters<Home['run']>[1] = {}) =>
    h.run([...args, '--verbose'], { ...options, env: { ...env, ...options.env } }).then((r) => {
      out.add(label, r, { stdoutHoldsToken: args[0] === 'token' });
      return r;
    });
  const login = (label: string, args: string[], options: Parameters<Home['run']>[1] = {}) => {
    const approval = approving(platform, { firstOnly: true });
    return run(label, ['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { ...options, onStderr: approval.onStderr });
  };
  const ok = (r: PlatResult) => expect(r.code, r.stderr).toBe(0);
  // The sweep reaches UserInfo too (whoami, and its failure): tokens not bound to the API, whose RFC 9728 document
  // is withheld. A bound session's secrets are swept by the same commands in the login and resource tests.
  platform.knobs.protectedResourceMetadata = 'missing';

  ok(await login('login', ['--scope', 'courses:read']));
  ok(await login('login --add-scope', ['--add-scope', 'students:read', '--json']));
  ok(await run('whoami', ['whoami']));
  ok(await run('whoami --json', ['whoami', '--json']));
  ok(await run('call GET', ['call', 'GET', '/api/courses']));
  ok(await run('call GET -i', ['call', 'GET', '/api/echo', '-i', '-f', 'q=1']));
  ok(await run('call POST', ['call', 'POST', '/api/echo', '-f', 'title=x', '-F', 'n=1']));
  ok(await run('token', ['token']));
  ok(await run('status', ['status']));
  ok(await run('status --check --json', ['status', '--check', '--json']));
  ok(await run('refresh', ['refresh']));
  ok(await run('refresh --json', ['refresh', '--json']));
  ok(await run('scopes', ['scopes']));
  ok(await run('op', ['op', '--refresh']));
  ok(await run('discover', ['discover', '--refresh', '--json']));
  ok(await run('completion', ['completion', 'bash']));
  for (const kind of ['scopes', 'profiles', 'base-urls', 'paths']) ok(await run(`__complete ${kind}`, ['__complete', kind]));

  // Failures, each with --verbose (which adds the cause).
  platform.override('/api/oauth/token', (_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end('{"error":"invalid_request","error_description":"the server refuses this refresh"}');
    return true;
  });
  expect((await run('refresh refused', ['refresh'])).code).toBe(1);
  platform.clearOverrides();
  platform.override('/api/courses', (_req, res) => {
    res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' });
    res.end('{"error":"invalid_token"}');
    return true;
  });
  expect((await run('call 401 after a refresh', ['call', 'GET', '/api/courses'])).code).toBe(4);
  platform.clearOverrides();
  expect((await run('call 403', ['call', 'GET', '/api/analytics'])).code).toBe(5);
  platform.override('/api/oauth/userinfo', (req) => (req.socket.destroy(), true));
  expect((await run('whoami reset', ['whoami'])).code).toBe(3);
  platform.clearOverrides();
  const iss = approving(platform, { firstOnly: true, deliver: async (cb) => {
    const u = new URL(cb);
    u.searchParams.set('iss', 'https://evil.example.test');
    await fetch(u).then((r) => r.text());
  } });
  expect((await run('login iss mismatch', ['login', '--no-browser', '--profile', 'other', '--base-url', platform.baseUrl], { onStderr: iss.onStderr })).code).toBe(4);
  const denied = approving(platform, { firstOnly: true, deny: true });
  expect((await run('login denied', ['login', '--no-browser', '--profile', 'other', '--base-url', platform.baseUrl], { onStderr: denied.onStderr })).code).toBe(4);
  platform.knobs.tokenResponse = 'token-type-mac';
  expect((await login('login with a broken token response', ['--profile', 'other'])).code).toBe(1);
  platform.knobs.tokenResponse = 'ok';

  // A confidential integration: its client secret comes on stdin and must appear nowhere but the token store.
  ok(
    await login('login --client-secret-stdin', ['--profile', 'bot', '--client-id', platform.preRegistered.confidentialClientId, '--client-secret-stdin'], {
      stdin: `${platform.preRegistered.confidentialClientSecret}\n`,
      keepStdinOpen: false,
    }),
  );
  ok(await run('refresh (bot)', ['refresh', '--profile', 'bot']));

  ok(await run('logout --all', ['logout', '--all']));
  // every profile logged out: the listing, and exit 4 (like gh auth status)
  expect((await run('status after logout', ['status', '--json'])).code).toBe(4);
}

describe('the secret sweep', () => {
  it('file store: no secret in any output of any command, and after logout none in any file', async () => {
    home = await makeHome();
    const env = { XDG_CACHE_HOME: path.join(home.dir, '.cache') };
    home.env.XDG_CACHE_HOME = env.XDG_CACHE_HOME;
    const out = new Outputs();
    await journey(home, out, env);
    const secrets = platform.secrets();
    expect(secrets).toContain(platform.preRegistered.confidentialClientSecret);
    expect(secrets.length).toBeGreaterThan(15);
    const outputs = out.sweep(secrets);
    // After logout --all nothing holds a secret — not the profiles, not the caches, no token — but the confidential
    // integration's client secret, kept for the next login in its own 0600 entry of the token store.
    const kept = path.join(home.configDir, 'tokens', 'bot.client-secret.json');
    const files = await expectNoSecretInFiles(home.dir, secrets, { except: (file) => file === path.relative(home.dir, kept) });
    const { readFile } = await import('node:fs/promises');
    const keptText = await readFile(kept, 'utf8');
    expect(secrets.filter((s) => keptText.includes(s))).toEqual([platform.preRegistered.confidentialClientSecret]);
    expect((await listFiles(path.join(home.configDir, 'tokens'))).map((f) => path.basename(f))).toEqual(['bot.client-secret.json']);
    expect(outputs).toBeGreaterThan(50);
    expect(files).toBeGreaterThan(4);
    console.log(`secrets.test.ts: ${secrets.length} secrets, ${outputs} outputs and ${files} files swept (file store)`);
  }, scaled(60_000));

  it('while logged in, the token file is the only file that holds a secret, and after a refresh not the spent one', async () => {
    home = await makeHome();
    home.env.XDG_CACHE_HOME = path.join(home.dir, '.cache');
    const approval = approving(platform, { firstOnly: true });
    expect((await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--verbose'], { onStderr: approval.onStderr })).code).toBe(0);
    const tokenFile = path.join(home.configDir, 'tokens', 'default.json');
    const { readFile } = await import('node:fs/promises');
    const first = JSON.parse(await readFile(tokenFile, 'utf8'));
    expect((await home.run(['refresh'])).code).toBe(0);
    await expectNoSecretInFiles(home.dir, platform.secrets(), { except: (file) => file === path.relative(home.dir, tokenFile) });
    const session = await readFile(tokenFile, 'utf8');
    expect(session).not.toContain(first.refreshToken);
    expect(session).not.toContain(first.accessToken);
  });

  it('a hostile server that quotes the secrets it received back in its errors: plat never repeats them', async () => {
    home = await makeHome();
    const out = new Outputs();
    const echo = (status: number, what: (req: import('node:http').IncomingMessage, body: URLSearchParams) => string) =>
      (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
        let text = '';
        req.setEncoding('utf8');
        req.on('data', (d: string) => (text += d));
        req.on('end', () => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'invalid_request', error_description: `rejected ${what(req, new URLSearchParams(text))}` }));
        });
        return true;
      };
    const bearer = (req: import('node:http').IncomingMessage) => String(req.headers.authorization ?? '').replace(/^Bearer /, '');

    platform.override('/api/oauth/token', echo(400, (_req, body) => `code ${body.get('code')} with verifier ${body.get('code_verifier')}`));
    const approval = approving(platform, { firstOnly: true });
    out.add('login, the code and verifier quoted back', await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--verbose'], { onStderr: approval.onStderr }));
    platform.clearOverrides();
    const signedIn = approving(platform, { firstOnly: true });
    expect((await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:read'], { onStderr: signedIn.onStderr })).code).toBe(0);

    platform.override('/api/oauth/token', echo(400, (_req, body) => `refresh token ${body.get('refresh_token')}`));
    out.add('refresh, the refresh token quoted back', await home.run(['refresh', '--verbose']));
    platform.clearOverrides();
    platform.override('/api/oauth/userinfo', echo(400, (req) => `access token ${bearer(req)}`));
    out.add('whoami, the access token quoted back', await home.run(['whoami', '--verbose']));
    platform.clearOverrides();
    platform.override('/api/courses', echo(400, (req) => `access token ${bearer(req)}`));
    const call = await home.run(['call', 'GET', '/api/courses', '--verbose']);
    // stdout is the API's body, unmodified by contract; stderr (errors, the trace) must not repeat it
    out.all.push({ label: 'call, the access token quoted back (stderr)', text: call.stderr });
    platform.clearOverrides();
    platform.override('/api/oauth/revoke', echo(400, (_req, body) => `token ${body.get('token')}`));
    out.add('logout, the tokens quoted back', await home.run(['logout', '--verbose']));
    platform.clearOverrides();

    const texts = out.all.map((o) => o.text).join('\n');
    expect(texts).toMatch(/rejected (code|refresh token|access token|token) \[redacted\]/);
    out.sweep(platform.secrets());
  });

  describe.skipIf(keyring.skip)(keyring.title('with the real keychain'), () => {
    beforeEach(() => keyring.require());

    it('keychain: no secret in any output, and none in any file at any point of the journey', async () => {
      home = await makeHome({ PLAT_TOKEN_STORE: undefined });
      home.env.XDG_CACHE_HOME = path.join(home.dir, '.cache');
      const out = new Outputs();
      await journey(home, out, { PLAT_TOKEN_STORE: undefined, XDG_CACHE_HOME: home.env.XDG_CACHE_HOME });
      const secrets = platform.secrets();
      out.sweep(secrets);
      await expectNoSecretInFiles(home.dir, secrets);
      expect(await listFiles(path.join(home.configDir, 'tokens'))).toEqual([]);
    }, scaled(60_000));

    it('keychain, while logged in: no file holds any secret', async () => {
      home = await makeHome({ PLAT_TOKEN_STORE: undefined });
      home.env.XDG_CACHE_HOME = path.join(home.dir, '.cache');
      const approval = approving(platform, { firstOnly: true });
      expect((await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: approval.onStderr })).code).toBe(0);
      expect((await home.run(['refresh'])).code).toBe(0);
      expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(5);
      await expectNoSecretInFiles(home.dir, platform.secrets());
      expect(await listFiles(path.join(home.configDir, 'tokens'))).toEqual([]);
      expect((await home.run(['logout'])).code).toBe(0);
    });
  });
});
