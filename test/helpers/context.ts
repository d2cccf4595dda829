/**
 * `testContext()`: the Context plat's layers run on (src/context.ts), built in the test process with captured
 * stdio, a clock the test moves, and everything else real — the home's config dir and token store, HTTP to the
 * reference platform, the cross-process lock. Session logic is then tested by calling it, branch by branch,
 * instead of spawning the binary (which stays for the contract: streams and exit codes).
 */
import { PassThrough, Readable } from 'node:stream';
import { afterEach } from 'vitest';
import { createContext, type Context, type Globals } from '../../src/context.js';
import { createIO } from '../../src/io.js';
import type { Home } from './cli.js';

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
  /** Where the clock starts, epoch ms (default: now). */
  now?: number;
}

export function testContext(home: Home, options: TestContextOptions = {}): TestContext {
  const env = Object.fromEntries(Object.entries({ ...home.env, ...options.env }).filter(([, v]) => v !== undefined));
  const captured = { stdout: '', stderr: '' };
  const capture = (which: 'stdout' | 'stderr') => {
    const stream = new PassThrough();
    stream.setEncoding('utf8').on('data', (chunk: string) => (captured[which] += chunk));
    return stream;
  };
  const io = createIO({ stdout: capture('stdout'), stderr: capture('stderr'), stdin: Readable.from(options.stdin ? [options.stdin] : []), env });
  let time = options.now ?? Date.now();
  const controller = new AbortController();
  const ctx = createContext({
    env,
    io,
    globals: { profile: 'default', json: false, verbose: false, ...options.globals },
    version: '0.0.0-test',
    signal: controller.signal,
    configDir: home.configDir,
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
