/**
 * `plat exec [--env NAME] -- <command> [args…]`: another program runs with a fresh token in its environment, never
 * on its command line (where `ps` and shell history would show it), and plat ends as the program ends.
 */
import type { Context } from '../context.js';
import { ExitStatus, UsageError } from '../errors.js';
import { accessToken } from '../session/index.js';
import { parsePositiveInt } from '../requests/values.js';

export interface ExecFlags {
  env?: string;
  /** As for plat token: refresh first when the token would expire sooner (a job that runs long needs a token that lasts). */
  minTtl?: string;
}

const DEFAULT_TOKEN_VARIABLE = 'PLAT_TOKEN';
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export async function run(ctx: Context, argv: string[], flags: ExecFlags): Promise<void> {
  const variable = flags.env ?? DEFAULT_TOKEN_VARIABLE;
  if (!VARIABLE_NAME.test(variable)) {
    throw new UsageError(`--env expects an environment variable name (letters, digits and _, not starting with a digit); got "${variable}".`);
  }
  if (variable === 'PLAT_BASE_URL') throw new UsageError('--env PLAT_BASE_URL would hide the base URL plat passes on: choose another name.');
  const [command, ...args] = argv;
  if (!command) throw new UsageError('plat exec needs a command to run: plat exec -- <command> [args…]');

  const { MAX_MIN_TTL_SECONDS } = await import('./auth/token.js');
  const minTtl = parsePositiveInt(flags.minTtl, '--min-ttl', MAX_MIN_TTL_SECONDS);
  const source = await accessToken(ctx, { minTtlMs: minTtl === undefined ? undefined : minTtl * 1000 });
  // The session's own origin (the token is for it), or for PLAT_TOKEN the platform named by --base-url/PLAT_BASE_URL.
  const baseUrl = source.kind === 'session' ? source.profile.baseUrl : source.baseUrl;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.env)) if (value !== undefined) env[name] = value;
  env[variable] = source.token;
  if (baseUrl) env.PLAT_BASE_URL = baseUrl;
  // Nothing of plat's own stays open while the program runs (keep-alive sockets, timers).
  await ctx.dispose();

  const { runChild } = await import('../terminal/child.js');
  const outcome = await runChild(command, args, env);
  if (outcome.kind === 'not-started') {
    throw new ExitStatus(outcome.status, `Could not run ${JSON.stringify(command)}: ${outcome.reason}. Check the name and your PATH.`);
  }
  if (outcome.status !== 0) throw new ExitStatus(outcome.status);
}
