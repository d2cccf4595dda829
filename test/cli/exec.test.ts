/**
 * `plat exec`: the token reaches the child through its environment only, plat's status is the child's (128 + n for
 * a signal death), signals sent to plat reach the child, and stdio is the child's own.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError, platBin, repoRoot } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();
let reporter: string;
let trapper: string;
let sleeper: string;

beforeEach(async () => {
  // Prints what it received: its arguments, the variables plat sets, and what arrived on stdin.
  reporter = path.join(home.dir, 'reporter.cjs');
  await writeFile(
    reporter,
    `let input = '';
process.stdin.setEncoding('utf8').on('data', (d) => (input += d)).on('end', () => {
  const env = {};
  for (const name of ['PLAT_TOKEN', 'PLAT_BASE_URL', 'API_TOKEN', 'KEEP_ME']) env[name] = process.env[name] ?? null;
  process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), env, input }));
  process.stderr.write('reporter: done\\n');
  process.exit(Number(process.argv[2] ?? 0));
});`,
  );
  // Announces itself, then on SIGTERM/SIGINT/SIGHUP says which signal arrived and exits 7.
  trapper = path.join(home.dir, 'trapper.cjs');
  await writeFile(
    trapper,
    `for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => { process.stdout.write('got ' + s + '\\n'); process.exit(7); });
process.stderr.write('child ready\\n');
setInterval(() => {}, 1000);`,
  );
  // Announces itself and takes no signal handlers: a signal ends it.
  sleeper = path.join(home.dir, 'sleeper.cjs');
  await writeFile(sleeper, `process.stderr.write('child ready\\n'); setInterval(() => {}, 1000);`);
});

async function loggedIn() {
  const result = await home.login(platform, ['--scope', 'courses:read']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

async function storedToken(): Promise<string> {
  return (await home.run(['token'])).stdout.trim();
}

/** Runs `plat exec` and sends `signal` to plat once the child has said it is ready. */
function execAndSignal(args: string[], signal: NodeJS.Signals) {
  let sent = false;
  return home.run(['exec', '--', process.execPath, ...args], {
    onStderr: (stderr, child) => {
      if (!sent && stderr.includes('child ready')) {
        sent = true;
        child.kill(signal);
      }
    },
  });
}

describe('plat exec', () => {
  it('gives the child the token and base URL in its environment, never on its command line, and its stdio', async () => {
    await loggedIn();
    const token = await storedToken();
    const result = await home.run(['exec', '--', process.execPath, reporter, '0', 'an arg'], { stdin: 'from stdin', env: { KEEP_ME: 'kept' } });
    expect(result.code, result.stderr).toBe(0);
    const seen = JSON.parse(result.stdout);
    expect(seen.env).toEqual({ PLAT_TOKEN: token, PLAT_BASE_URL: platform.baseUrl, API_TOKEN: null, KEEP_ME: 'kept' });
    expect(seen.argv).toEqual(['0', 'an arg']);
    expect(seen.input).toBe('from stdin');
    expect(result.stderr).toBe('reporter: done\n');
    expect(JSON.stringify(seen.argv)).not.toContain(token);
  });

  it('--env names the variable that carries the token', async () => {
    await loggedIn();
    const token = await storedToken();
    const result = await home.run(['exec', '--env', 'API_TOKEN', '--', process.execPath, reporter]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).env).toMatchObject({ API_TOKEN: token, PLAT_BASE_URL: platform.baseUrl, PLAT_TOKEN: null });
  });

  it('the token works: a shell one-liner calls the API with it', async () => {
    await loggedIn();
    const script = `node -e 'fetch(process.env.PLAT_BASE_URL + "/api/courses", { headers: { authorization: "Bearer " + process.env.PLAT_TOKEN } }).then((r) => r.text()).then((t) => process.stdout.write(t))'`;
    const result = await home.run(['exec', '--', 'sh', '-c', script]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
  });

  it("plat help scripting's curl, Python and Node examples work as written", async () => {
    await loggedIn();
    // `plat` on PATH, as after npm i -g.
    const bin = path.join(home.dir, 'bin');
    await mkdir(bin);
    await symlink(platBin, path.join(bin, 'plat'));
    const topic = await readFile(path.join(repoRoot, 'src', 'help', 'topics', 'scripting.md'), 'utf8');
    const start = topic.indexOf('## The exec contract');
    expect(start).toBeGreaterThan(0);
    const section = topic.slice(start);
    const block = /```\n([\s\S]*?)```/.exec(section)![1]!;
    // A command goes on over the lines after it until the next plat (the topic keeps within 80 columns).
    const commands = block.split(/\n(?=plat )/).map((command) => command.trimEnd());
    const lines = commands.filter((line) => /^plat exec -- (sh -c 'curl|python3|node)/.test(line));
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile('sh', ['-c', line], { env: { ...home.env, PATH: `${bin}:${process.env.PATH}` } as NodeJS.ProcessEnv, timeout: 20_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
      expect(result.code, `${line}\n${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout), line).toMatchObject({ anonymous: false, sub: 'user-ada' });
    }
  });

  it("exits with the child's status", async () => {
    await loggedIn();
    for (const status of [1, 3, 42]) {
      const result = await home.run(['exec', '--', process.execPath, reporter, String(status)]);
      expect(result.code).toBe(status);
      expect(result.stderr).toBe('reporter: done\n'); // plat adds nothing: the failure is the child's
    }
  });

  it('passes SIGTERM, SIGINT and SIGHUP on to the child and exits with what the child chose', async () => {
    await loggedIn();
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      const result = await execAndSignal([trapper], signal);
      expect(result.signal, signal).toBeNull();
      expect(result.code, `${signal}: ${result.stderr}`).toBe(7);
      expect(result.stdout).toBe(`got ${signal}\n`);
    }
  });

  it('a child ended by a signal: plat exits 128 + n, as a shell reports it', async () => {
    await loggedIn();
    const term = await execAndSignal([sleeper], 'SIGTERM');
    expect(term.code, term.stderr).toBe(128 + 15);
    const int = await execAndSignal([sleeper], 'SIGINT');
    expect(int.code, int.stderr).toBe(128 + 2);
    const killed = await home.run(['exec', '--', process.execPath, '-e', 'process.kill(process.pid, "SIGKILL")']);
    expect(killed.code).toBe(128 + 9);
  });

  it('a command that does not exist: exit 127 with a sentence', async () => {
    await loggedIn();
    const result = await home.run(['exec', '--', 'no-such-program-plat-test']);
    expect(result.code).toBe(127);
    // One sentence, nothing else (expectCleanError knows only plat's own exit codes; 127 is the shell's).
    expect(result.stderr).toBe('error: Could not run "no-such-program-plat-test": command not found. Check the name and your PATH.\n');
  });

  it('not logged in: exit 4 and the child never runs', async () => {
    const result = await home.run(['exec', '--', process.execPath, reporter]);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Not logged in/);
  });

  it('with PLAT_TOKEN: that token and the base URL given are passed on', async () => {
    const result = await home.run(['exec', '--', process.execPath, reporter], { env: { PLAT_TOKEN: 'ci-token-value', PLAT_BASE_URL: platform.baseUrl } });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).env).toMatchObject({ PLAT_TOKEN: 'ci-token-value', PLAT_BASE_URL: platform.baseUrl });
  });

  it("another platform than the session's: exit 4, the session's token does not go to it, the child never runs", async () => {
    await loggedIn();
    const result = await home.run(['exec', '--base-url', 'http://127.0.0.1:9', '--', process.execPath, reporter]);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/is signed in to http:\/\/127\.0\.0\.1:\d+, not to http:\/\/127\.0\.0\.1:9/);
    expectCleanError(result);
  });

  it('usage errors: no command, a bad variable name', async () => {
    await loggedIn();
    const none = await home.run(['exec']);
    expect(none.code).toBe(2);
    const noDashes = await home.run(['exec', 'ls', '-la']);
    expect(noDashes.code).toBe(2);
    expect(noDashes.stderr).toMatch(/unknown option '-la'\n.*go after --: plat exec -- <command>/);
    const bad = await home.run(['exec', '--env', 'NOT-A-NAME', '--', process.execPath, reporter]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--env expects an environment variable name/);
    expect(bad.stdout).toBe('');
  });
});
