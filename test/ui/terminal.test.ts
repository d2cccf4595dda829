/**
 * What a person at a terminal sees (issue 17), on a real pseudo-terminal (util-linux `script`): a response body
 * without a final newline does not run into plat's error line; a callback address pasted during --no-browser login
 * stays visible as typed (no spinner redrawing over it); a login that knows no platform asks for it.
 */
import { spawn } from 'node:child_process';
import { beforeEach, describe, expect, it } from 'vitest';
import { platBin } from '../helpers/cli.js';
import { APPROVING_BROWSER } from '../helpers/login.js';
import { signIn } from '../helpers/consent.js';
import { readProfile, readStoredSession, sessionBytes } from '../helpers/state.js';
import { pty } from './shells.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform();
const home = useHome();

const plat = (args: string) => `'${process.execPath}' '${platBin}' ${args}`;

/** Runs a command line on a pseudo-terminal; `react` sees the growing output and may type into the terminal. */
function onPty(
  commandLine: string,
  env: Record<string, string | undefined>,
  react?: (output: string, type: (keys: string) => void) => void,
): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const clean = definedEnv({ ...env, TERM: 'xterm-256color' }) as NodeJS.ProcessEnv;
    // A terminal has a size (script's own pty has none, and a spinner on a 0-column terminal redraws without end).
    const child = spawn('script', ['-qec', `stty cols 100 rows 30; ${commandLine}`, '/dev/null'], { env: clean, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const type = (keys: string) => child.stdin.write(keys);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      output += d;
      react?.(output, type);
    });
    child.stdin.on('error', () => {});
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`did not finish in time:\n${output}`));
    }, scaled(30_000));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ output, code });
    });
  });
}

describe.skipIf(pty.skip)(pty.title('on a terminal'), () => {
  beforeEach(() => pty.require());

  it('a body without a final newline ends its line before plat\'s error line (stdout and stderr on one terminal)', async () => {
    platform.override('/api/plain', (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return true;
    });
    const result = await onPty(plat(`call GET /api/plain --anonymous --base-url ${platform.baseUrl}`), home.env);
    expect(result.code).toBe(1);
    expect(result.output).not.toMatch(/Not Found\S*error/);
    expect(result.output).toMatch(/Not Found\r?\n(\x1b\[[0-9;]*m)*error:/);
    // off a terminal the body stays byte-exact: nothing is added to stdout
    const piped = await home.run(['call', 'GET', '/api/plain', '--anonymous', '--base-url', platform.baseUrl]);
    expect(piped.stdout).toBe('Not Found');
  });

  it('a callback address pasted while --no-browser login waits is not hidden under a spinner', async () => {
    let typed = '';
    const result = await onPty(plat(`login --no-browser --base-url ${platform.baseUrl}`), home.env, (output, type) => {
      const authorize = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(output)?.[1];
      if (!authorize || typed || !/Waiting for the sign-in to finish/.test(output)) return;
      typed = 'pending';
      void platform.approve(authorize).then((callback) => {
        typed = callback;
        type(`${callback}\r`);
      });
    });
    expect(result.code, result.output).toBe(0);
    const after = result.output.slice(result.output.indexOf('Waiting for the sign-in to finish'));
    // no spinner frame, no line redrawn: the pasted address is on the terminal as typed, in one piece
    expect(after).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(after).toContain(typed);
    expect(after).toMatch(/Logged in to/);
  });

  it('a login that knows no platform asks for its base URL on a terminal (off one it stays exit 2)', async () => {
    let answered = false;
    const result = await onPty(plat('login'), { ...home.env, PLAT_BROWSER: APPROVING_BROWSER }, (output, type) => {
      if (answered || !/Which platform\? Its base URL/.test(output)) return;
      answered = true;
      type(`${platform.baseUrl}\r`);
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(new RegExp(`Logged in to ${platform.baseUrl.replace(/\./g, '\\.')} as Ada Lovelace`));
    const offTerminal = await home.run(['login', '--profile', 'other']);
    expect(offTerminal.code).toBe(2);
    expect(offTerminal.stderr).toMatch(/No platform to talk to: pass --base-url/);
  });

  it('Ctrl-C at that question ends the login at once: exit 130, nothing stored', async () => {
    let answered = false;
    const result = await onPty(plat('login'), { ...home.env, PLAT_BROWSER: APPROVING_BROWSER }, (output, type) => {
      if (answered || !/Which platform\? Its base URL/.test(output)) return;
      answered = true;
      type('\x03');
    });
    expect(result.code, result.output).toBe(130);
    expect(result.output).toMatch(/Interrupted\./);
    expect(await sessionBytes(home)).toEqual({ profile: null, tokens: null });
  });
});

/**
 * Step-up that asks (issue 25): on a 403 insufficient_scope, a person at a terminal is asked to sign in again adding
 * the scope, and the request is made once more; a "no", --no-prompt, PLAT_NO_PROMPT=1, CI or a pipe keep exit 5.
 */
describe.skipIf(pty.skip)(pty.title('step-up that asks, on a terminal'), () => {
  beforeEach(() => pty.require());
  const person = () => ({ ...home.env, CI: undefined, PLAT_BROWSER: APPROVING_BROWSER });
  const answer = (keys: string) => {
    let answered = false;
    return (output: string, type: (keys: string) => void) => {
      if (answered || !/\[y\/N\]/.test(output)) return;
      answered = true;
      type(keys);
    };
  };

  it('yes: signs in again adding the scope (as the session was made) and the call is made once more: exit 0', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const result = await onPty(plat('call GET /api/analytics'), person(), answer('y\r'));
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/This call needs analytics:read\. Sign in again adding it\? \[y\/N\]/);
    expect(result.output).toMatch(/Signed in again with analytics:read; making the request once more/);
    expect(result.output).not.toMatch(/error:/);
    expect((await readProfile(home)).scopes).toEqual(expect.arrayContaining(['courses:read', 'analytics:read']));
    expect(platform.stats.count('GET /api/analytics')).toBe(2);
  });

  it('yes, where the server acts as a plain OAuth server (grants no openid: no ID token): the same sign-in again and the call made once more', async () => {
    platform.knobs.grantScopes = (requested) => requested.filter((scope) => !['openid', 'profile', 'email'].includes(scope));
    await signIn(home, platform, ['--scope', 'courses:read']);
    expect((await readStoredSession(home)).idToken).toBeUndefined();
    const result = await onPty(plat('call GET /api/analytics'), person(), answer('y\r'));
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/Signed in again with analytics:read; making the request once more/);
    expect(result.output).not.toMatch(/error:/);
    const { scopes } = await readProfile(home);
    expect(scopes).toEqual(expect.arrayContaining(['courses:read', 'analytics:read']));
    expect(scopes).not.toContain('openid');
    expect((await readStoredSession(home)).idToken).toBeUndefined();
    expect(platform.stats.count('GET /api/analytics')).toBe(2);
  });

  it('--jq without --paginate: the question comes too, and the answer after the sign-in is filtered', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const result = await onPty(plat('call GET /api/analytics --jq keys'), person(), answer('y\r'));
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/This call needs analytics:read\. Sign in again adding it\? \[y\/N\]/);
    expect(result.output).toMatch(/Signed in again with analytics:read; making the request once more/);
    expect(result.output).not.toMatch(/error:/);
    expect((await readProfile(home)).scopes).toEqual(expect.arrayContaining(['courses:read', 'analytics:read']));
    expect(platform.stats.count('GET /api/analytics')).toBe(2);
  });

  it('--jq without --paginate, no: the refusal as before, its body printed, exit 5', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const result = await onPty(plat('call GET /api/analytics --jq keys'), person(), answer('n\r'));
    expect(result.code, result.output).toBe(5);
    expect(result.output).toMatch(/\[y\/N\]/);
    expect(result.output).toMatch(/insufficient_scope/); // the 403 body, as plat call --jq prints it
    expect(result.output).toMatch(/Run: plat login --add-scope analytics:read/);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
  });

  it('no: the refusal as before, its body printed, exit 5 with the command that fixes it', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const result = await onPty(plat('call GET /api/analytics'), person(), answer('n\r'));
    expect(result.code, result.output).toBe(5);
    expect(result.output).toMatch(/insufficient_scope/); // the 403 body, as plat call prints it
    expect(result.output).toMatch(/Run: plat login --add-scope analytics:read/);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
  });

  it('--no-prompt, PLAT_NO_PROMPT=1 or CI: no question, exit 5', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    for (const [args, env] of [
      ['call GET /api/analytics --no-prompt', person()],
      ['call GET /api/analytics', { ...person(), PLAT_NO_PROMPT: '1' }],
      ['call GET /api/analytics', { ...person(), CI: 'true' }],
    ] as const) {
      const result = await onPty(plat(args), env);
      expect(result.code, result.output).toBe(5);
      expect(result.output).not.toMatch(/\[y\/N\]/);
    }
  });

  describe('a question shows what it asks for, whole', () => {
    /** A 403 on /api/wide naming `scope`. */
    const refusing = (scope: string) =>
      platform.override('/api/wide', (_req, res) => {
        res.writeHead(403, { 'content-type': 'application/json', 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` });
        res.end('{"error":"insufficient_scope"}');
        return true;
      });

    it('a scope too long to show (206 characters ending in :admin) is not asked for; the error shows its end and says why', async () => {
      await signIn(home, platform, ['--scope', 'courses:read']);
      const scope = `courses:read.${'x'.repeat(187)}:admin`;
      expect(scope).toHaveLength(206);
      refusing(scope);
      const result = await onPty(plat('call GET /api/wide'), person(), answer('n\r'));
      expect(result.code, result.output).toBe(5);
      expect(result.output).not.toMatch(/\[y\/N\]/);
      const plain = result.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r?\n/g, ' ');
      expect(plain).toMatch(/This call needs a scope of 206 characters \("courses:read\.x+…x+:admin"\), longer than a question can show whole, so plat does not offer to sign in again adding it\./);
      expect(plain).toMatch(/needs "courses:read\.x+…x+:admin" \(206 characters\), a scope too long to show whole, so plat does not suggest adding it/);
      expect(plain).not.toMatch(/--add-scope/);
      expect(platform.stats.count('token:authorization_code')).toBe(1);
    });

    it('a scope the server’s metadata does not list is not asked for, and the note says so', async () => {
      await signIn(home, platform, ['--scope', 'courses:read']);
      refusing('tenant:admin');
      const result = await onPty(plat('call GET /api/wide'), person(), answer('n\r'));
      expect(result.code, result.output).toBe(5);
      expect(result.output).not.toMatch(/\[y\/N\]/);
      expect(result.output).toMatch(/This call needs tenant:admin, which the server's metadata does not list among its scopes, so plat does not offer to sign in again adding it\./);
      expect(platform.stats.count('token:authorization_code')).toBe(1);
    });
  });

  it('--paginate: the question comes at the page that failed, and paging goes on from it', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const before = (await home.run(['token'])).stdout.trim();
    // Page 2 needs a scope the first session lacks (the server says so); a token from the step-up is served.
    platform.override('/api/lists/cursor', (req, res) => {
      const url = new URL(req.url ?? '/', platform.baseUrl);
      if (!url.searchParams.get('cursor') || req.headers.authorization !== `Bearer ${before}`) return false;
      res.writeHead(403, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="insufficient_scope", scope="analytics:read"' });
      res.end('{"error":"insufficient_scope"}');
      return true;
    });
    const result = await onPty(plat('call GET /api/lists/cursor --paginate --ndjson'), person(), answer('y\r'));
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/Page 2 of this list needs analytics:read\. Sign in again adding it\?/);
    const piped = await home.run(['call', 'GET', '/api/lists/cursor', '--paginate', '--ndjson']);
    expect(result.output.match(/"title"/g)?.length).toBe(piped.stdout.trim().split('\n').length);
  });

  it('status --check: another profile\'s UserInfo refusal naming a missing scope asks nothing, and no profile gains it', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // tokens UserInfo takes
    await signIn(home, platform, ['--scope', 'openid courses:read']);
    await signIn(home, platform, ['--profile', 'other', '--scope', 'openid courses:read']);
    const others = (await home.run(['token', '--profile', 'other'])).stdout.trim();
    platform.override('/api/oauth/userinfo', (req, res) => {
      if (req.headers.authorization !== `Bearer ${others}`) return false;
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="analytics:read"' }).end();
      return true;
    });
    const result = await onPty(plat('status --check'), person(), answer('y\r'));
    const plain = result.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(plain).not.toMatch(/\[y\/N\]|Sign in again/);
    expect(result.code, plain).toBe(0); // the current profile's token works; another's refusal is shown, not the exit code
    expect(plain).toMatch(/^other\r?\n[\s\S]*Problem +not checked: The UserInfo endpoint does not accept this session's token/m);
    expect(platform.stats.count('token:authorization_code')).toBe(2); // no sign-in beyond the two above
    expect((await readProfile(home)).scopes).not.toContain('analytics:read');
    const other = JSON.parse((await home.run(['status', 'other', '--json'])).stdout);
    expect(JSON.stringify(other)).not.toContain('analytics:read');
  });

  it('whoami: a UserInfo refusal naming a missing scope asks too', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // tokens UserInfo takes
    await signIn(home, platform, ['--scope', 'openid courses:read']);
    const before = (await home.run(['token'])).stdout.trim();
    platform.override('/api/oauth/userinfo', (req, res) => {
      if (req.headers.authorization !== `Bearer ${before}`) return false;
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="analytics:read"' }).end();
      return true;
    });
    const result = await onPty(plat('whoami'), person(), answer('y\r'));
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/whoami needs analytics:read\. Sign in again adding it\? \[y\/N\]/);
    expect(result.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')).toMatch(/User\s+Ada Lovelace/);
  });
});

describe.skipIf(pty.skip)(pty.title('plat login --device on a terminal'), () => {
  beforeEach(() => pty.require());

  it('shows a QR code of the complete address beside the address and the code, and signs in once approved', async () => {
    let approved = false;
    const env = { ...home.env, CI: undefined, DISPLAY: undefined, WAYLAND_DISPLAY: undefined, PLAT_BROWSER: undefined, BROWSER: undefined };
    const result = await onPty(plat(`login --device --base-url ${platform.baseUrl}`), env, (output) => {
      const uri = /^ {2}(http\S+)\r?$/m.exec(output)?.[1];
      const code = /enter the code: +(?:\x1b\[[0-9;]*m)*([A-Z0-9-]+)/.exec(output)?.[1];
      if (approved || !uri || !code || !/scan this code/.test(output)) return;
      approved = true;
      void platform.approveDevice(uri, { userCode: code });
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/Or scan this code, which carries the address and the code:/);
    expect(result.output).toMatch(/[▀▄█]{10,}/); // half blocks: the QR code itself
    expect(result.output).toMatch(/Logged in to/);
  });
});
