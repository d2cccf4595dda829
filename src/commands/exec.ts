/**
 * `plat exec [--env NAME] -- <command> [args…]`: another program runs with a fresh token in its environment, never
 * on its command line (where `ps` and shell history would show it), and plat ends as the program ends.
 */
import type { Context } from '../context.js';
import { ExitStatus, UsageError } from '../errors.js';
import { accessToken, boundTokenError, currentProfile, isDpopBound, requirePlatform } from '../session/index.js';
import { parsePositiveInt } from '../requests/values.js';

export interface ExecFlags {
  env?: string;
  /** As for plat token: refresh first when the token would expire sooner (a job that runs long needs a token that lasts). */
  minTtl?: string;
  /** No token for the program: a plat proxy for its lifetime instead (PLAT_PROXY_URL, PLAT_BASE_URL). */
  proxy?: boolean;
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

  if (flags.proxy) {
    if (flags.env !== undefined && flags.env !== DEFAULT_TOKEN_VARIABLE) throw new UsageError('--env names the variable for a token, and with --proxy the program gets none: drop one of them.');
    if (flags.minTtl !== undefined) throw new UsageError('--min-ttl is for a token the program holds, and with --proxy it holds none (the proxy refreshes as needed): drop one of them.');
    return runWithProxy(ctx, command, args);
  }
  const { MAX_MIN_TTL_SECONDS } = await import('./auth/token.js');
  const minTtl = parsePositiveInt(flags.minTtl, '--min-ttl', MAX_MIN_TTL_SECONDS);
  const source = await accessToken(ctx, { minTtlMs: minTtl === undefined ? undefined : minTtl * 1000 });
  // A DPoP-bound token in PLAT_TOKEN would be refused wherever the program sent it: the program is not started.
  if (isDpopBound(source)) throw boundTokenError(ctx, source);
  // The session's own origin (the token is for it), or for PLAT_TOKEN the platform named by --base-url/PLAT_BASE_URL.
  const baseUrl = source.kind === 'session' ? source.profile.baseUrl : source.baseUrl;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.env)) if (value !== undefined) env[name] = value;
  env[variable] = source.token;
  if (baseUrl) env.PLAT_BASE_URL = baseUrl;
  // Nothing of plat's own stays open while the program runs (keep-alive sockets, timers).
  await ctx.dispose();

  await runProgram(command, args, env);
}

/**
 * `plat exec --proxy`: the program gets the address of a proxy that lives as long as it does, and no token at all
 * (PLAT_TOKEN is removed from its environment too): the token never leaves plat's process. The proxy forwards every
 * method, as the program could with PLAT_TOKEN in hand: it acts as you either way.
 */
async function runWithProxy(ctx: Context, command: string, args: string[]): Promise<void> {
  const { startProxy } = await import('../proxy/server.js');
  const log = ctx.globals.verbose;
  ctx.globals.verbose = false;
  requirePlatform(ctx, await currentProfile(ctx));
  // As plain exec: without a session (exit 4) the command does not run, rather than run and meet 401s. The token
  // stays in this process.
  await accessToken(ctx);
  const proxy = await startProxy(ctx, { port: 0, allowWrite: true, log });
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.env)) if (value !== undefined && name !== 'PLAT_TOKEN') env[name] = value;
  env.PLAT_PROXY_URL = proxy.url;
  // Without the trailing slash, as a base URL is written: "$PLAT_BASE_URL/api/courses".
  env.PLAT_BASE_URL = proxy.url.replace(/\/$/, '');
  try {
    await runProgram(command, args, env);
  } finally {
    await proxy.close({ graceMs: 0 });
  }
}

async function runProgram(command: string, args: string[], env: Record<string, string>): Promise<void> {
  const { runChild } = await import('../terminal/child.js');
  const outcome = await runChild(command, args, env);
  if (outcome.kind === 'not-started') {
    throw new ExitStatus(outcome.status, `Could not run ${JSON.stringify(command)}: ${outcome.reason}. Check the name and your PATH.`);
  }
  if (outcome.status !== 0) throw new ExitStatus(outcome.status);
}
