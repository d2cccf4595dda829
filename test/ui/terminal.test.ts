/**
 * What a person at a terminal sees (issue 17), on a real pseudo-terminal (util-linux `script`): a response body
 * without a final newline does not run into plat's error line; a callback address pasted during --no-browser login
 * stays visible as typed (no spinner redrawing over it); a login that knows no platform asks for it.
 */
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, platBin, type Home } from '../helpers/cli.js';
import { APPROVING_BROWSER } from '../login/helpers.js';
import { startPlatform, type Platform } from '../platform/index.mjs';
import { pty } from './shells.js';

let platform: Platform;
let home: Home;

beforeAll(async () => {
  platform = await startPlatform();
});
afterAll(async () => {
  await platform.close();
});
beforeEach(async () => {
  home = await makeHome();
});
afterEach(async () => {
  platform.clearOverrides();
  await home.cleanup();
});

const plat = (args: string) => `'${process.execPath}' '${platBin}' ${args}`;

/** Runs a command line on a pseudo-terminal; `react` sees the growing output and may type into the terminal. */
function onPty(
  commandLine: string,
  env: Record<string, string | undefined>,
  react?: (output: string, type: (keys: string) => void) => void,
): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const clean = Object.fromEntries(Object.entries({ ...env, TERM: 'xterm-256color' }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
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
    }, 30_000);
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
});
