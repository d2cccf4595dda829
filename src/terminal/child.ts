/**
 * Runs another program as plat's child for `plat exec`: stdio inherited, the given environment, signals passed on,
 * and its end turned into an exit status the way a shell does (its code, or 128 + the signal's number).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** The signals a terminal, a CI runner or a supervisor sends to stop a job; the child decides what they mean. */
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export type ChildOutcome =
  | { kind: 'exited'; status: number }
  /** The program could not be started: 127 not found, 126 found but not runnable (as a shell reports them). */
  | { kind: 'not-started'; status: 126 | 127; reason: string };

export async function runChild(command: string, args: string[], env: Record<string, string>): Promise<ChildOutcome> {
  // While the child runs, plat's own interrupt handling (abort, then exit 130 after a grace period) must not end
  // plat first: the child decides how long a clean stop takes, and plat's status is the child's. The handlers are
  // put back once the child has ended.
  const saved = new Map(FORWARDED_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  for (const signal of FORWARDED_SIGNALS) process.removeAllListeners(signal);
  try {
    return await new Promise<ChildOutcome>((resolve) => {
      const child = spawn(command, args, { stdio: 'inherit', env });
      const forward = (signal: NodeJS.Signals) => {
        // Ctrl-C in a terminal reaches the child from the terminal too; passing it on as well is what npm and
        // shells' job control do, and is what a `kill <plat's pid>` from a supervisor needs.
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      };
      for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
      child.on('error', (error: NodeJS.ErrnoException) => {
        const missing = error.code === 'ENOENT';
        resolve({
          kind: 'not-started',
          status: missing ? 127 : 126,
          reason: missing ? 'command not found' : `cannot run it (${error.code ?? error.message})`,
        });
      });
      child.on('exit', (code, signal) => {
        const status = signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1);
        resolve({ kind: 'exited', status });
      });
    });
  } finally {
    for (const signal of FORWARDED_SIGNALS) {
      process.removeAllListeners(signal);
      for (const listener of saved.get(signal) ?? []) process.on(signal, listener as (signal: NodeJS.Signals) => void);
    }
  }
}
