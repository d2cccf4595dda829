/**
 * `testContext()`: the Context plat's layers run on (src/context.ts), built in the test process with captured
 * stdio, a clock the test moves, and everything else real — the home's config dir and token store, HTTP to the
 * reference platform, the cross-process lock. Session logic is then tested by calling it, branch by branch,
 * instead of spawning the binary (which stays for the contract: streams and exit codes).
 */
import { PassThrough, Readable } from 'node:stream';
import { afterEach, expect } from 'vitest';
import { createContext, type Context, type Globals } from '../../src/context.js';
import { PlatError } from '../../src/errors.js';
import { createIO } from '../../src/terminal/io.js';
import { resolveInvocation } from '../../src/session/profile/invocation.js';
import type { Home } from './cli.js';
import { definedEnv } from './env.js';

export interface TestContext {
  ctx: Context;
  /** What plat wrote to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  clock: {
    now(): number;
    /** Moves the clock forward (a token ages, a cache expires) without waiting. */
    advance(ms: number): void;
  };
  /** Ctrl-C. */
  interrupt(): void;
  /** Closes what the context opened (HTTP connections). */
  dispose(): Promise<void>;
}

export interface TestContextOptions {
  /** Extra environment on top of the home's (PLAT_TOKEN, PLAT_BASE_URL, …); undefined removes a variable. */
  env?: Record<string, string | undefined>;
  globals?: Partial<Globals>;
  /** What stdin holds (then it ends). */
  stdin?: string;
  /** stdin and stderr are a terminal's, as a person's are (where plat may ask a question: a step-up). */
  terminal?: boolean;
  /** Where the clock starts, epoch ms (default: now). */
  now?: number;
}

/**
 * One in-process context on `home`. Tests today take theirs from useTestContexts (below), which closes them after
 * each test.
 * @public the suite's in-process entry point: kept exported for a test that needs a context outside a test's life.
 */
export function testContext(home: Home, options: TestContextOptions = {}): TestContext {
  const env = definedEnv({ ...home.env, ...options.env });
  const captured = { stdout: '', stderr: '' };
  const capture = (which: 'stdout' | 'stderr') => {
    const stream = new PassThrough();
    stream.setEncoding('utf8').on('data', (chunk: string) => (captured[which] += chunk));
    return stream;
  };
  // One set per context, as main.ts makes one per process: the IO's, which the context hands on as ctx.secrets.
  const [stderr, stdin] = [capture('stderr'), Readable.from(options.stdin ? [options.stdin] : [])];
  if (options.terminal) {
    Object.assign(stderr, { isTTY: true });
    Object.assign(stdin, { isTTY: true });
  }
  const io = createIO({ stdout: capture('stdout'), stderr, stdin, env });
  let time = options.now ?? Date.now();
  const controller = new AbortController();
  // The product's own resolution (option, PLAT_PROFILE, plat switch, default), on the home's config dir.
  const { profile, currentProfile, profileSource, defaultConfigDir } = resolveInvocation(env, {
    profile: options.globals?.profile,
    home: env.HOME ?? home.dir,
    configDir: home.configDir,
  });
  const ctx = createContext({
    env,
    io,
    globals: { json: false, verbose: false, profile, currentProfile, profileSource, ...options.globals },
    version: '0.0.0-test',
    signal: controller.signal,
    configDir: home.configDir,
    defaultConfigDir,
    now: () => time,
  });
  return {
    ctx,
    stdout: () => captured.stdout,
    stderr: () => captured.stderr,
    clock: {
      now: () => time,
      advance: (ms) => {
        time += ms;
      },
    },
    interrupt: () => controller.abort(),
    dispose: () => ctx.dispose(),
  };
}

/**
 * The contexts a test file opens, each disposed after its test: `const open = useTestContexts(home)`, then
 * `const t = open({ env })` inside a test. The counterpart of usePlatform()/useHome() for in-process tests.
 */
export function useTestContexts(home: Home): (options?: TestContextOptions) => TestContext {
  const opened: TestContext[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.dispose()));
  });
  return (options) => {
    const t = testContext(home, options);
    opened.push(t);
    return t;
  };
}

/**
 * The in-process counterpart of the fault suite's expectFailure: `run` (a command's run function, or a session
 * call) fails the contract's way, as a PlatError with this exit code and a sentence matching `message` — what
 * main.ts prints after "error:" and exits with (any other error would be an "Unexpected failure") — and, unless
 * `stdout` is allowed, printed nothing on stdout.
 */
export async function expectPlatError(
  t: TestContext,
  run: () => Promise<unknown>,
  exitCode: number,
  message: RegExp,
  options: { stdout?: boolean; /** Names the case in failure messages (a command of a list). */ what?: string } = {},
): Promise<PlatError> {
  const what = options.what ? `${options.what}: ` : '';
  const error = await run().then(
    () => expect.unreachable(`${what}expected a failure with exit code ${exitCode}; stderr: ${t.stderr()}`),
    (e: unknown) => e,
  );
  if (!(error instanceof PlatError)) throw new Error(`${what}expected a PlatError (a sentence plat prints), got: ${(error as Error)?.stack ?? error}`);
  expect(error.exitCode, `${what}${error.message}`).toBe(exitCode);
  expect(error.message, what).toMatch(message);
  expect(error.message.length, what).toBeGreaterThan(20);
  if (!options.stdout) expect(t.stdout(), `${what}stdout`).toBe('');
  return error;
}
