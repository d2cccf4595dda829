import { Chalk } from 'chalk';
import type { Readable, Writable } from 'node:stream';
import { importPackage } from './esm.js';
import { scrubKnownSecrets } from './redact.js';
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
}

export interface Spinner {
  stop(): void;
}

export interface IOOptions {
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

export function createIO(options: IOOptions): IO {
  const { stdout, stderr, stdin, env } = options;
  const stderrIsTTY = Boolean(stderr.isTTY);
  const color = colorWanted(env, stderrIsTTY, options.colorFlag);
  // Our own decision (flag, NO_COLOR, FORCE_COLOR, TTY) sets the level; chalk only paints.
  const paint = new Chalk({ level: color ? 1 : 0 });
  const outColor = colorWanted(env, Boolean(stdout.isTTY), options.colorFlag);
  const outPaint = new Chalk({ level: outColor ? 1 : 0 });
  const line = (s: string) => {
    const scrubbed = scrubKnownSecrets(s);
    stderr.write(scrubbed.endsWith('\n') ? scrubbed : `${scrubbed}\n`);
  };
  return {
    stdout,
    stderr,
    stdin,
    stdoutIsTTY: Boolean(stdout.isTTY),
    stderrIsTTY,
    stdinIsTTY: Boolean(stdin.isTTY),
    color,
    outColor,
    out: (text) => {
      stdout.write(text);
    },
    err: line,
    // Messages may quote a server; whatever a server slipped into one never reaches the terminal as a control.
    note: (s) => line(paint.dim(safe(s))),
    warn: (s) => line(`${paint.yellow('warning:')} ${safe(s)}`),
    success: (s) => line(`${paint.green('✓')} ${safe(s)}`),
    dim: (s) => outPaint.dim(s),
    bold: (s) => outPaint.bold(s),
    green: (s) => outPaint.green(s),
    red: (s) => paint.red(s),
    spinner: async (text) => {
      if (!stderrIsTTY || env.CI) return { stop() {} };
      const { default: ora } = await importPackage<typeof import('ora')>('ora');
      const spin = ora({ text, stream: stderr, color: 'cyan', isEnabled: true }).start();
      return { stop: () => spin.stop() };
    },
  };
}

export const errorPrefix = (io: IO) => io.red('error:');

/** A message made safe to print (line feeds kept): the last guard for text plat did not write itself. */
export const safe = (message: string) => sanitize(message, 0, { multiline: true });
