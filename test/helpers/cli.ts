/**
 * Runs the built CLI (bin/plat.js → dist/) as a child process, the way users and scripts do, with a throwaway
 * config dir and HOME, and returns what it printed and how it exited. `login()` drives consent the way a person
 * would: it waits for the authorization URL on stderr and approves (or denies) it on the reference platform.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Platform } from '../platform/index.mjs';
import { readablePlatBin } from './readable-copy.js';
import { approving } from './consent.js';
import { scaled } from './time.js';
import { definedEnv } from './env.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const platBin = path.join(repoRoot, 'bin', 'plat.js');

/**
 * A time as plat prints it (src/session/tokens/no-refresh-token.ts clockTime): "14:05" today, "2026-11-26 00:05" on
 * another day — which a test run shortly before midnight sees for an hour-long token.
 */
export const CLOCK_TIME = /(?:\d{4}-\d\d-\d\d )?\d\d:\d\d/.source;

export interface PlatResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** With `measure`: the process's peak RSS (VmHWM, polled from /proc) in KiB, and its wall time. */
  peakKiB?: number;
  ms?: number;
  /** With `interruptAfterMs`: how long after the SIGINT the process ended (undefined when it ended before). */
  afterInterruptMs?: number;
  /** With `discardStdout`: how many bytes went to stdout (stdout itself is then ''). */
  stdoutBytes?: number;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Text written to stdin, then closed; `keepOpen` leaves stdin open (the child sees no EOF). */
  stdin?: string;
  keepStdinOpen?: boolean;
  /** stdin is /dev/null (`plat … </dev/null`, as cron and CI runners start programs), not a pipe. */
  stdinDevNull?: boolean;
  /** The working directory (default: the test's). */
  cwd?: string;
  /** Called with the growing stderr; lets a test react (approve consent, send a signal). */
  onStderr?: (stderr: string, child: ChildProcess) => void;
  timeoutMs?: number;
  /** Poll the process's peak RSS (PlatResult.peakKiB) and time it. */
  measure?: boolean;
  /** Send SIGINT (Ctrl-C) this long after the start, if it is still running. */
  interruptAfterMs?: number;
  /** Count stdout's bytes instead of keeping them (a large output). */
  discardStdout?: boolean;
  /** Run as this user and group (root only), e.g. to meet permissions that do not stop root. */
  uid?: number;
  gid?: number;
}

export interface Home {
  dir: string;
  configDir: string;
  env: Record<string, string | undefined>;
  run(args: string[], options?: RunOptions): Promise<PlatResult>;
  /** `plat login` with the browser replaced by an HTTP client that approves (or denies) consent. */
  login(platform: Platform, args?: string[], options?: RunOptions & { deny?: boolean; callback?: (url: string) => Promise<void> }): Promise<PlatResult>;
  cleanup(): Promise<void>;
}

/** The environment of the test process without anything of plat's own, so the host's settings never leak in. */
function baseEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(PLAT_|BROWSER$|NO_COLOR$|FORCE_COLOR$|HTTPS?_PROXY$|NO_PROXY$|https?_proxy$|no_proxy$)/.test(k)) continue;
    env[k] = v;
  }
  return env;
}

/**
 * Under `npm run coverage` (test/coverage.mjs), what a spawned plat needs to be measured: V8 writes its coverage to
 * NODE_V8_COVERAGE on exit. A V8 code cache (bin/plat.js) holds functions compiled without block counters, which
 * would report every branch of them as one: a cache dir under a file can be neither read nor written, so each plat
 * compiles afresh. Empty otherwise.
 */
function coverageEnv(): Record<string, string> {
  const coverage = process.env.PLAT_TEST_V8_COVERAGE;
  return coverage ? { NODE_V8_COVERAGE: coverage, XDG_CACHE_HOME: '/dev/null/plat-coverage-no-code-cache' } : {};
}

export async function makeHome(extraEnv: Record<string, string | undefined> = {}): Promise<Home> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat cli '));
  const configDir = path.join(dir, 'config dir');
  const env = {
    ...baseEnv(),
    // In the home's environment, not only runPlat's: the plat a test starts itself (on a pseudo-terminal, through
    // sh, killed midway) is measured too.
    ...coverageEnv(),
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, '.config'),
    PLAT_CONFIG_DIR: configDir,
    PLAT_TOKEN_STORE: 'file',
    ...extraEnv,
  };
  const home: Home = {
    dir,
    configDir,
    env,
    run: (args, options = {}) => runPlat(args, { ...options, env: { ...env, ...options.env } }),
    login: (platform, args = [], options = {}) => {
      const consent = approving(platform, {
        firstOnly: true,
        deny: options.deny,
        ...(options.callback ? { deliver: (callback: string) => options.callback!(callback) } : {}),
        onError: (error, child) => child.stderr?.emit('data', `\n[test] consent failed: ${error.message}\n`),
      });
      return home.run(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], {
        ...options,
        onStderr: (stderr, child) => {
          options.onStderr?.(stderr, child);
          consent.onStderr(stderr, child);
        },
      });
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
  return home;
}

export function runPlat(args: string[], options: RunOptions = {}): Promise<PlatResult> {
  return new Promise((resolve, reject) => {
    // An undefined value means "unset": spawn would pass the string "undefined".
    const env = definedEnv(options.env ?? process.env);
    if (env.NODE_V8_COVERAGE === undefined) Object.assign(env, coverageEnv());
    // Another user may not be able to enter the checkout (a clone in /root or a 0700 directory): give it a copy.
    const otherUser = options.uid !== undefined && options.uid !== process.getuid?.();
    const child = spawn(process.execPath, [otherUser ? readablePlatBin(repoRoot) : platBin, ...args], {
      env: env as NodeJS.ProcessEnv,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stdio: [options.stdinDevNull ? 'ignore' : 'pipe', 'pipe', 'pipe'] as ('ignore' | 'pipe')[],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid ?? options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    let stdoutBytes = 0;
    if (options.discardStdout) child.stdout!.on('data', (d: Buffer) => (stdoutBytes += d.length));
    else child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      options.onStderr?.(stderr, child);
    });
    const started = Date.now();
    let peakKiB = 0;
    const readPeak = () => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
      } catch {
        // the process has exited
      }
    };
    const poll = options.measure ? setInterval(readPeak, 20) : undefined;
    let interruptedAt: number | undefined;
    const interrupt =
      options.interruptAfterMs === undefined
        ? undefined
        : setTimeout(() => {
            interruptedAt = Date.now();
            child.kill('SIGINT');
          }, options.interruptAfterMs);
    if (child.stdin) {
      child.stdin.on('error', () => {});
      if (options.stdin !== undefined) child.stdin.write(options.stdin);
      if (!options.keepStdinOpen) child.stdin.end();
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`plat ${args.join(' ')} did not finish in time.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? scaled(20_000));
    child.on('error', reject);
    child.on('exit', () => {
      if (poll) readPeak();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(interrupt);
      clearInterval(poll);
      const ended = Date.now();
      resolve({
        code,
        signal,
        stdout,
        stderr,
        ...(options.measure ? { peakKiB, ms: ended - started } : {}),
        ...(interruptedAt !== undefined ? { afterInterruptMs: ended - interruptedAt } : {}),
        ...(options.discardStdout ? { stdoutBytes } : {}),
      });
    });
  });
}

/** The contract's exit codes (cli-contract.md); anything else is a crash. */
const CONTRACT_EXIT_CODES = [0, 1, 2, 3, 4, 5, 130];

/**
 * plat ended the contract's way, not by crashing: no stack trace or raw JavaScript error (the contract's "one or
 * two sentences"), no "Unexpected failure" (main.ts's words for an error no layer translated: a bug), no death by
 * signal, and an exit code the contract defines. Holds for successes (warnings) and failures alike.
 */
export function expectCleanError(result: PlatResult): void {
  const problems: string[] = [];
  if (/\n\s+at .+\(.+:\d+:\d+\)/.test(result.stderr) || /node:internal|TypeError:|ReferenceError:/.test(result.stderr)) {
    problems.push('stderr has a stack trace or raw error');
  }
  if (/Unexpected failure/.test(result.stderr)) problems.push('plat reported an unexpected failure (an error no layer translated)');
  if (result.signal !== null) problems.push(`plat was killed by ${result.signal}`);
  else if (!CONTRACT_EXIT_CODES.includes(result.code!)) problems.push(`exit code ${result.code} is not one of the contract's`);
  if (problems.length > 0) throw new Error(`${problems.join('; ')}:\n${result.stderr}`);
}

/**
 * Runs plat with a probe that records which standard streams it builds (Node builds process.stdin/stderr on first
 * access, 2–3 ms each), the built-in modules it loads and the files it require()s (the shim, a bundle loaded on
 * use such as dist/mcp.cjs), without touching either stream itself (fs.writeSync).
 */
export async function runPlatProbed(home: Home, args: string[]): Promise<PlatResult & { touched: string[]; loaded: string[]; required: string[] }> {
  const probe = path.join(home.dir, 'probe-streams.cjs');
  await writeFile(
    probe,
    [
      'const touched = [];',
      "for (const name of ['stdin', 'stderr']) {",
      '  const own = Object.getOwnPropertyDescriptor(process, name);',
      '  Object.defineProperty(process, name, { configurable: true, enumerable: own.enumerable, get() { touched.push(name); return own.get.call(process); } });',
      '}',
      "process.on('exit', () => require('node:fs').writeSync(1, `\\nPROBE ${JSON.stringify({ touched, loaded: process.moduleLoadList, required: Object.keys(require.cache) })}\\n`));",
    ].join('\n'),
  );
  // NODE_OPTIONS carries the probe into the one process runPlat spawns (node bin/plat.js …).
  const result = await home.run(args, { env: { NODE_OPTIONS: `--require ${JSON.stringify(probe)}` } });
  const found = /\nPROBE (.*)\n$/.exec(result.stdout);
  if (!found) throw new Error(`plat ${args.join(' ')} ended without the probe's report:\n${result.stderr}`);
  const { touched, loaded, required } = JSON.parse(found[1]!) as { touched: string[]; loaded: string[]; required: string[] };
  return { ...result, stdout: result.stdout.slice(0, found.index), touched, loaded, required };
}
