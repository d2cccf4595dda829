/**
 * Output for people and for scripts: results alone on stdout, everything else on stderr; colour only where a
 * person is looking (a terminal), decided for stdout and stderr separately; NO_COLOR, --no-color and FORCE_COLOR
 * as the conventions say.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { platBin } from '../helpers/cli.js';
import { onTerminal, pty } from './shells.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const ESC = '\u001b[';
const platform = usePlatform();
const home = useHome({ TERM: 'xterm-256color' });

const plat = (args: string) => `'${process.execPath}' '${platBin}' ${args}`;

describe('off a terminal', () => {
  it('prints results on stdout and notes on stderr, without colour', async () => {
    const result = await home.run(['scopes', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').every((line) => /^[a-z_]+(:[a-z]+)?\s+\S/.test(line))).toBe(true);
    expect(result.stderr).toMatch(/^Not logged in: /);
    expect(result.stdout + result.stderr).not.toContain(ESC);
  });

  it('colours with FORCE_COLOR=1; NO_COLOR and --no-color win over it', async () => {
    const forced = await home.run(['scopes', '--base-url', platform.baseUrl], { env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain(ESC);
    expect(forced.stderr).toContain(ESC);
    for (const [args, env] of [
      [['scopes'], { FORCE_COLOR: '1', NO_COLOR: '1' }],
      [['scopes', '--no-color'], { FORCE_COLOR: '1' }],
      [['--no-color', 'scopes'], { FORCE_COLOR: '1' }],
    ] as Array<[string[], Record<string, string>]>) {
      const result = await home.run([...args, '--base-url', platform.baseUrl], { env });
      expect(result.stdout + result.stderr, args.join(' ')).not.toContain(ESC);
    }
  });
});

describe.skipIf(pty.skip)(pty.title('on a terminal'), () => {
  beforeEach(() => pty.require());

  it('colours human output, and NO_COLOR or --no-color turn it off', async () => {
    const coloured = await onTerminal(plat(`scopes --base-url ${platform.baseUrl}`), home.env);
    expect(coloured.code).toBe(0);
    expect(coloured.output).toContain(`${ESC}1mcourses:read`);
    for (const [args, env] of [
      ['scopes', { NO_COLOR: '1' }],
      ['scopes --no-color', {}],
    ] as Array<[string, Record<string, string>]>) {
      const plain = await onTerminal(plat(`${args} --base-url ${platform.baseUrl}`), { ...home.env, ...env });
      expect(plain.output, args).toContain('courses:read');
      expect(plain.output, args).not.toContain(ESC);
    }
  });

  it('writes no colour into a file stdout was redirected to, while stderr on the terminal keeps it', async () => {
    const file = path.join(home.dir, 'scopes.txt');
    const result = await onTerminal(`${plat(`scopes --base-url ${platform.baseUrl}`)} > '${file}'`, home.env);
    expect(result.code).toBe(0);
    const written = await readFile(file, 'utf8');
    expect(written).toMatch(/^courses:read\s+read courses$/m);
    expect(written).not.toContain(ESC);
    expect(result.output).toMatch(/\u001b\[2mNot logged in/);
  });

  it('keeps status rows aligned when coloured', async () => {
    const login = await home.login(platform, ['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    const result = await onTerminal(plat('status'), home.env);
    const rows = result.output
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split(/\r?\n/)
      .filter((line) => /^(Platform|Issuer|Logged in|Scopes|Token|Stored in|Client ID) /.test(line));
    expect(rows.length).toBeGreaterThanOrEqual(6);
    expect(new Set(rows.map((line) => line.search(/ {2}\S/))).size).toBe(1);
  });
});
