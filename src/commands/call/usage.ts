/**
 * `plat call` typed the way gh api (or curl) is: a path without its method, `-X POST`, `-q`. Each is a usage error
 * that names plat's own spelling, with the command to run instead (commander would say only "missing required
 * argument 'path'" about a path it was given, or "unknown option '-X'").
 */
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { suggest } from '../../session/index.js';

export interface GhHabits {
  /** `-X <method>` */
  X?: string;
  /** `-q <expr>` */
  q?: string;
}

/** The error for a call missing its path or using gh's -X/-q, or undefined when the words are plat call's. */
export function callUsageError(ctx: Context, method: string, path: string | undefined, flags: GhHabits): UsageError | undefined {
  // `plat call -X POST /api/courses`: the one word given is the path.
  const target = path ?? method;
  const verb = (flags.X ?? (path === undefined ? 'GET' : method)).toUpperCase();
  if (flags.X !== undefined) {
    return new UsageError(
      `plat call takes the method as its first word, not -X: ${suggest(ctx, ['call', verb, target])} (or ${suggest(ctx, ['api', '-X', verb, target])}, gh's shape).`,
    );
  }
  if (flags.q !== undefined) {
    return new UsageError(`plat call spells -q as --jq: ${suggest(ctx, ['call', verb, target, '--jq', flags.q])} (plat api takes -q too).`);
  }
  if (path === undefined) {
    return /^(\/|https?:\/\/)/i.test(method)
      ? new UsageError(`plat call needs the method before the path: add it, as in ${suggest(ctx, ['call', 'GET', method])} (or ${suggest(ctx, ['api', method])}, GET by default).`)
      : new UsageError(`plat call needs a path after the method, as in ${suggest(ctx, ['call', method.toUpperCase(), '/api/courses'])}.`);
  }
  return undefined;
}
