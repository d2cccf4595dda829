/**
 * The entry point: build the context, run the program, and map every outcome to the contract's exit code. The
 * only place that decides how plat ends.
 */
import { fstatSync, statSync } from 'node:fs';
import { createContext, type Context, type Globals } from './context.js';
import { ExitCode, ExitStatus, InterruptedError, PlatError, UsageError } from './errors.js';
import { createIO, errorPrefix, isCI, safe, type IO } from './terminal/io.js';
import { plainForm, plainInvocation } from './dispatch.js';
import { resolveInvocation } from './session/profile/invocation.js';
import type * as os from 'node:os';

declare const PLAT_VERSION: string;
const version = typeof PLAT_VERSION === 'string' ? PLAT_VERSION : '0.0.0-dev';
/**
 * True in dist/plain-<command>.cjs: this file built for the plain forms alone (src/build/build.mjs), which bin/plat.js loads
 * for them. Without commander and the other commands it is half the text to read and compile at every start.
 */
declare const PLAT_PLAIN_BUNDLE: boolean;

/** Whether main() runs these arguments without commander (src/dispatch.ts): what dist/plain-<command>.cjs can run. */
export function runsPlainly(argv: string[] = process.argv, env: Record<string, string | undefined> = process.env): boolean {
  const form = plainForm(argv.slice(2));
  if (!form) return false;
  // Where a step-up question could be asked (a person at a terminal), the whole program runs: it has the login.
  // plat token asks nothing (it sends no request a scope could be refused for), so `$(plat token)` typed at a
  // terminal runs its own bundle too.
  return form.command === 'token' || !mightAsk(argv, env);
}

function mightAsk(argv: string[], env: Record<string, string | undefined>): boolean {
  return promptWanted(argv, env) && !isCI(env) && mayBeTerminal(0) && mayBeTerminal(2);
}

/**
 * Whether the person lets plat ask questions (Globals.prompt; step-up.ts adds a terminal and CI unset): not with
 * --no-prompt or PLAT_NO_PROMPT=1. The one reading of both, for the bundle's choice and for the context. plat's
 * words end at `--`: a --no-prompt after it is the other program's (`plat exec -- mytool --no-prompt`).
 */
export function promptWanted(argv: readonly string[], env: Record<string, string | undefined>): boolean {
  return !platsOwn(argv).includes('--no-prompt') && env.PLAT_NO_PROMPT !== '1';
}

/**
 * The words that are plat's, read before commander runs (--no-prompt, --verbose, --no-color): those before a `--`.
 * After it they are the other program's: `plat exec -- curl --verbose` is curl's trace, not plat's.
 */
export function platsOwn(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf('--');
  return end === -1 ? argv : argv.slice(0, end);
}

/**
 * Whether `fd` may be a terminal: a character device other than /dev/null. node:tty would cost every start a module
 * (and node:net under it); the precise test comes later (step-up.ts). /dev/null is told apart by its device number:
 * a script run by cron, systemd or hyperfine has it on stdin and stderr, and counting it as a terminal sent every
 * such plain start to the whole program (dist/main.cjs, after reading the plain bundle too).
 */
function mayBeTerminal(fd: number): boolean {
  try {
    const stats = fstatSync(fd);
    return stats.isCharacterDevice() && stats.rdev !== devNull();
  } catch {
    return false;
  }
}

let devNullRdev: number | undefined;
function devNull(): number | undefined {
  try {
    return (devNullRdev ??= statSync('/dev/null').rdev);
  } catch {
    return undefined;
  }
}

export async function main(argv: string[] = process.argv): Promise<number> {
  const env = process.env;
  let epipeHandled = false;
  // Getters: Node builds each standard stream on first access, and createIO reads them only when used.
  const io = createIO({
    get stdout() {
      if (!epipeHandled) {
        epipeHandled = true;
        // `plat call … | head` closes stdout early: that is the reader's choice, not an error.
        process.stdout.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
        });
      }
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    get stdin() {
      return process.stdin;
    },
    env,
    colorFlag: !platsOwn(argv).includes('--no-color'),
  });
  const verbose = platsOwn(argv).includes('--verbose') || env.PLAT_DEBUG === '1';
  const prompt = promptWanted(argv, env);
  const controller = new AbortController();
  // 128 + the signal's number, as a shell reports a command the signal ended: 130 for Ctrl-C (SIGINT), 143 for
  // SIGTERM (a service manager's or a CI runner's stop), so a script can tell the two apart.
  let interruptedCode: number = ExitCode.interrupted;
  const onSignal = (code: number) => () => {
    if (controller.signal.aborted) process.exit(interruptedCode);
    interruptedCode = code;
    controller.abort();
    // A flow that does not notice the abort in time is ended for it.
    setTimeout(() => process.exit(interruptedCode), 3000).unref();
  };
  process.on('SIGINT', onSignal(ExitCode.interrupted));
  process.on('SIGTERM', onSignal(ExitCode.terminated));

  let context: Context | undefined;
  /** Set once commander is loaded: only then can its errors occur. */
  let isCommanderError = (_error: unknown) => false;
  try {
    const makeContext = (globals: Globals): Context => {
      const { configDir, defaultConfigDir, profile, currentProfile, profileSource } = resolveInvocation(env, { profile: globals.profile, home: homedir(env) });
      context = createContext({
        env,
        io,
        globals: { ...globals, profile, currentProfile, profileSource, verbose: globals.verbose || verbose, prompt },
        version,
        signal: controller.signal,
        configDir,
        defaultConfigDir,
        oneShot: true,
      });
      return context;
    };
    // The plain forms scripts run most skip building the program (src/dispatch.ts).
    const plain = plainInvocation(argv.slice(2), makeContext);
    if (plain) {
      await plain();
    } else if (typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE) {
      // A constant in the built bundles, so esbuild drops the other branch, and commander and cli.ts with it.
      throw new Error('dist/plain-<command>.cjs runs only the plain forms (bin/plat.js loads dist/main.cjs for the rest)');
    } else {
      const [{ buildProgram }, commander, { helpWidth }] = await Promise.all([import('./cli.js'), import('commander'), import('./help/width.js')]);
      isCommanderError = (error) => error instanceof commander.CommanderError;
      const program = buildProgram(version, makeContext, {
        lazy: true,
        output: {
          writeOut: (s) => io.stdout.write(s),
          writeErr: (s) => io.stderr.write(s),
          outputError: (s, write) => write(s.replace(/^error:/, errorPrefix(io))),
          getOutHelpWidth: () => helpWidth(io.stdout as NodeJS.WriteStream, env.COLUMNS),
          getErrHelpWidth: () => helpWidth(io.stderr as NodeJS.WriteStream, env.COLUMNS),
        },
      });
      await program.parseAsync(argv);
    }
    if (controller.signal.aborted) throw new InterruptedError();
    return ExitCode.ok;
  } catch (error) {
    const code = report(io, error, verbose, controller.signal.aborted, isCommanderError(error));
    return code === ExitCode.interrupted ? interruptedCode : code;
  } finally {
    // The handlers stay: a Ctrl-C while output drains still ends with 130, not a signal death.
    await context?.dispose({ exiting: true });
  }
}

/**
 * What os.homedir() answers on Unix (libuv reads HOME first), without loading node:os for it (0.2 ms per start, and
 * bin/plat.js keys its code cache the same way).
 */
function homedir(env: NodeJS.ProcessEnv): string {
  if (process.platform !== 'win32' && env.HOME) return env.HOME;
  return (process.getBuiltinModule('node:os') as typeof os).homedir();
}

function report(io: IO, error: unknown, verbose: boolean, interrupted: boolean, fromCommander: boolean): number {
  if (error instanceof ExitStatus) {
    if (error.message) io.err(`${errorPrefix(io)} ${safe(error.message)}`);
    return error.status;
  }
  if (fromCommander) {
    // commander already printed its message (unknown option, missing argument, with suggestions)
    const { code } = error as { code?: string };
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') {
      return ExitCode.ok;
    }
    return ExitCode.usage;
  }
  if (interrupted && !(error instanceof PlatError && error.exitCode !== ExitCode.interrupted)) {
    io.err('Interrupted.');
    return ExitCode.interrupted;
  }
  if (error instanceof PlatError) {
    io.err(`${errorPrefix(io)} ${safe(error.message)}`);
    if (verbose && error.cause) io.err(String((error.cause as Error)?.stack ?? error.cause));
    return error.exitCode;
  }
  const message = (error as Error)?.message ?? String(error);
  io.err(`${errorPrefix(io)} Unexpected failure: ${safe(message)}. Run again with --verbose for details, and report it if it repeats.`);
  if (verbose) io.err(String((error as Error)?.stack ?? ''));
  return error instanceof UsageError ? ExitCode.usage : ExitCode.failure;
}
