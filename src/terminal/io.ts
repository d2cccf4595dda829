import type { ChalkInstance } from 'chalk';
import { fstatSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { importPackage } from '../esm.js';
import { KnownSecrets } from '../redact.js';
import { sanitize } from './text.js';

/**
 * The streams plat talks through, and how it decorates them. Results go to stdout; everything meant for a person
 * (progress, notes, warnings, errors) goes to stderr. Colour and spinners only where a person is looking: a TTY,
 * and colour only when NO_COLOR/--no-color do not forbid it.
 */
export interface IO {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  readonly stdinIsTTY: boolean;
  /** Colour on stderr. */
  readonly color: boolean;
  /** Colour on stdout: decided on its own, so `plat status > file` from a terminal writes no escape codes. */
  readonly outColor: boolean;
  /** Writes a result to stdout as is. */
  out(text: string): void;
  /** A line to stderr. */
  err(line: string): void;
  note(line: string): void;
  warn(line: string): void;
  success(line: string): void;
  /** Styles for results on stdout (plain unless outColor). */
  dim(text: string): string;
  bold(text: string): string;
  green(text: string): string;
  /** Style for messages on stderr (plain unless color). */
  red(text: string): string;
  /** A spinner on stderr when it is a TTY; otherwise prints nothing. */
  spinner(text: string): Promise<Spinner>;
  /**
   * The secrets this IO's lines are scrubbed of: the invocation's (one IO per invocation, one set per IO). The
   * context hands it on as ctx.secrets, where the session layer remembers what it learns.
   */
  readonly secrets: KnownSecrets;
}

interface Spinner {
  stop(): void;
}

export interface IOOptions {
  /**
   * Read only when first used: main.ts passes getters over `process.stdout`/`stderr`/`stdin`, because Node builds
   * each of those streams on first access (2–3 ms each: a pipe, a file, a TTY) and most runs never touch stdin, and
   * a quiet run of a script never touches stderr.
   */
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** false when --no-color was given. */
  colorFlag?: boolean;
}

/** NO_COLOR (any non-empty value) and --no-color win; FORCE_COLOR (not "0") forces; otherwise only on a TTY. */
export function colorWanted(env: Record<string, string | undefined>, isTTY: boolean, colorFlag = true): boolean {
  if (!colorFlag) return false;
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.TERM === 'dumb') return false;
  return isTTY;
}

/** A value computed on first use, then kept. */
function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

export function createIO(options: IOOptions): IO {
  const { env } = options;
  const stderr = once(() => options.stderr);
  const stdin = once(() => options.stdin);
  // On the same terminal as stderr, stdout's writes are watched (see below) from its first use on.
  let midLine: (() => boolean) | undefined;
  const stdout = once(() => {
    const stream = options.stdout;
    midLine = stdoutMidLineOnSameTerminal(stream, () => stderr());
    return stream;
  });
  const stderrIsTTY = once(() => Boolean(stderr().isTTY));
  const stdoutIsTTY = once(() => Boolean(stdout().isTTY));
  // Our own decision (flag, NO_COLOR, FORCE_COLOR, TTY) sets the level; chalk only paints.
  const color = once(() => colorWanted(env, stderrIsTTY(), options.colorFlag));
  const outColor = once(() => colorWanted(env, stdoutIsTTY(), options.colorFlag));
  // Without colour a style is the text itself, and chalk is not even loaded (see chalk() below).
  const paint = once(() => (color() ? chalk() : undefined));
  const outPaint = once(() => (outColor() ? chalk() : undefined));
  const secrets = new KnownSecrets();
  const line = (s: string) => {
    const scrubbed = secrets.scrub(s);
    // A body without a final newline ("Not Found") must not run into plat's own line on the same terminal.
    const lead = midLine?.() ? '\n' : '';
    stderr().write(`${lead}${scrubbed.endsWith('\n') ? scrubbed : `${scrubbed}\n`}`);
  };
  return {
    get stdout() {
      return stdout();
    },
    get stderr() {
      return stderr();
    },
    get stdin() {
      return stdin();
    },
    get stdoutIsTTY() {
      return stdoutIsTTY();
    },
    get stderrIsTTY() {
      return stderrIsTTY();
    },
    get stdinIsTTY() {
      return Boolean(stdin().isTTY);
    },
    get color() {
      return color();
    },
    get outColor() {
      return outColor();
    },
    out: (text) => {
      stdout().write(text);
    },
    err: line,
    // Messages may quote a server; whatever a server slipped into one never reaches the terminal as a control.
    note: (s) => line(paint()?.dim(safe(s)) ?? safe(s)),
    warn: (s) => line(`${paint()?.yellow('warning:') ?? 'warning:'} ${safe(s)}`),
    success: (s) => line(`${paint()?.green('✓') ?? '✓'} ${safe(s)}`),
    dim: (s) => outPaint()?.dim(s) ?? s,
    bold: (s) => outPaint()?.bold(s) ?? s,
    green: (s) => outPaint()?.green(s) ?? s,
    red: (s) => paint()?.red(s) ?? s,
    spinner: async (text) => {
      if (!stderrIsTTY() || isCI(env)) return { stop() {} };
      const { default: ora } = await importPackage<typeof import('ora')>('ora');
      // discardStdin: false, so an address pasted while the spinner runs still reaches plat.
      const spin = ora({ text, stream: stderr(), color: 'cyan', isEnabled: true, discardStdin: false }).start();
      return { stop: () => spin.stop() };
    },
    secrets,
  };
}

/**
 * chalk, for output plat decided to colour (its own detection is stubbed out at build time). required, not
 * imported: esbuild then initialises chalk (its style tables, ~0.5 ms) when something is first coloured instead of
 * at every start, and a run without colour (a script's) never does. test/cli/startup.test.ts checks the bundle
 * keeps it lazy.
 */
function chalk(): ChalkInstance {
  const { Chalk } = require('chalk') as typeof import('chalk');
  return new Chalk({ level: 1 });
}

/** CI set to anything but empty, `false` or `0`: nobody watches, so plat asks nothing and draws no spinner. */
export function isCI(env: Record<string, string | undefined>): boolean {
  return env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
}

export const errorPrefix = (io: IO) => io.red('error:');

/**
 * When stdout and stderr are the same terminal, whether what went to stdout last left the cursor mid-line (and no
 * stderr line has ended it since). Only then is stdout's write watched: one comparison per chunk, and nothing at
 * all when either stream is a pipe or a file (a script's output stays byte-exact and unwatched).
 */
function stdoutMidLineOnSameTerminal(stdout: Writable & { isTTY?: boolean }, getStderr: () => Writable & { isTTY?: boolean }): (() => boolean) | undefined {
  if (!stdout.isTTY) return undefined;
  const stderr = getStderr();
  if (!stderr.isTTY || !sameTerminal(stdout, stderr)) return undefined;
  let midLine = false;
  const write = stdout.write.bind(stdout) as (...args: unknown[]) => boolean;
  stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    const last = typeof chunk === 'string' ? chunk.at(-1) : chunk instanceof Uint8Array && chunk.length > 0 ? String.fromCharCode(chunk[chunk.length - 1]!) : undefined;
    if (last !== undefined) midLine = last !== '\n';
    return write(chunk, ...rest);
  }) as typeof stdout.write;
  return () => {
    const was = midLine;
    midLine = false;
    return was;
  };
}

function sameTerminal(a: Writable, b: Writable): boolean {
  const fdA = (a as { fd?: unknown }).fd;
  const fdB = (b as { fd?: unknown }).fd;
  if (typeof fdA !== 'number' || typeof fdB !== 'number') return false;
  try {
    const [x, y] = [fstatSync(fdA), fstatSync(fdB)];
    return x.rdev === y.rdev && x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** A message made safe to print (line feeds kept): the last guard for text plat did not write itself. */
export const safe = (message: string) => sanitize(message, 0, { multiline: true });
