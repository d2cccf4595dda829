/**
 * `plat scopes plan <operationId>…`: the least set of scopes that covers those operations (from the security
 * requirements of the platform's /openapi.json; catalogue/scope-plan.ts does the search), and which of them the
 * session already holds. `plat login --for` asks for the same set (planFor below).
 */
import { getApiIndex } from '../../catalogue/fetch-openapi.js';
import { findOperation, type ApiIndex } from '../../catalogue/openapi.js';
import { planScopes, type ScopePlan } from '../../catalogue/scope-plan.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { currentProfile, heldScopes, requirePlatform, suggest } from '../../session/index.js';
import { didYouMean, sanitize } from '../../terminal/text.js';
import { printJson } from '../shared/format.js';
import { unknownOperation } from '../op/op.js';
import { table } from '../shared/table.js';

/** `plat scopes plan --json`. */
interface ScopePlanOutput {
  baseUrl: string;
  profile: string;
  /** Whether the held scopes are a session's on this platform (false: none are counted as held). */
  loggedIn: boolean;
  /** The least set, each with whether the session holds it. */
  scopes: Array<{ name: string; held: boolean }>;
  /** The ones to ask for (not held). */
  missing: string[];
  operations: Array<{ operationId: string; method: string; path: string; satisfiedBy: string[] }>;
  /** Operations whose document states no security requirement. */
  unstated: string[];
}

/** `plat scopes pln`: the one word plat scopes takes is plan, said with the same closest-match sentence as any other. */
export function unknownSubcommand(word: string): UsageError {
  return new UsageError(
    `plat scopes has no subcommand "${sanitize(word, 100)}".${didYouMean(word, ['plan']) || ' The one it has is plan.'} plat scopes lists the scopes; plat scopes plan <operationId>… plans the least set.`,
  );
}

/** `--for` / `plan` values: repeatable, each may hold a space- or comma-separated list. */
export function parseOperationIds(values: readonly string[]): string[] {
  return [...new Set(values.flatMap((v) => v.split(/[\s,]+/)).filter(Boolean))];
}

/** The plan for the named operations; a name the document does not have is a usage error (exit 2). */
export function planFor(index: ApiIndex, ids: string[], held: readonly string[]): ScopePlan & { resolved: NonNullable<ReturnType<typeof findOperation>>[] } {
  if (ids.length === 0) throw new UsageError('Name at least one operation: plat scopes plan <operationId>… (plat op lists them).');
  const resolved = ids.map((id) => {
    const op = findOperation(index, id);
    if (!op) throw unknownOperation(index, id);
    return op;
  });
  const plan = planScopes(
    resolved.map((op) => ({ id: op.operationId, security: op.security })),
    held,
  );
  if (plan.unsatisfiable.length > 0) {
    throw new UsageError(`${plan.unsatisfiable.join(', ')} need${plan.unsatisfiable.length > 1 ? '' : 's'} a credential other than an OAuth token; plat cannot sign in for ${plan.unsatisfiable.length > 1 ? 'them' : 'it'}.`);
  }
  return { ...plan, resolved };
}

export async function runPlan(ctx: Context, values: string[]): Promise<void> {
  const { io } = ctx;
  const profile = await currentProfile(ctx);
  const baseUrl = requirePlatform(ctx, profile);
  const index = await getApiIndex(ctx, baseUrl);
  const { session: loggedIn, scopes: held } = heldScopes(ctx, profile, baseUrl);
  const ids = parseOperationIds(values);
  const plan = planFor(index, ids, held);
  const missing = plan.scopes.filter((s) => !held.includes(s));
  const output: ScopePlanOutput = {
    baseUrl,
    profile: profile.name,
    loggedIn,
    scopes: plan.scopes.map((name) => ({ name, held: held.includes(name) })),
    missing,
    operations: plan.operations.map((p) => {
      const op = plan.resolved.find((o) => o.operationId === p.id)!;
      return { operationId: p.id, method: op.method, path: op.path, satisfiedBy: p.satisfiedBy };
    }),
    unstated: plan.unstated,
  };
  if (ctx.globals.json) {
    printJson(io, output);
    return;
  }
  if (plan.scopes.length > 0) io.out(table(output.scopes.map((s) => [s.name, s.held ? 'held' : '']), [io.bold, io.green]));
  else io.out('No scopes: these operations need none.\n');
  io.note(
    output.operations.map((o) => `${o.operationId} (${o.method} ${o.path}): ${o.satisfiedBy.length > 0 ? o.satisfiedBy.join(' + ') : 'no scope'}`).join('\n'),
  );
  if (plan.unstated.length > 0) io.warn(`The API description states no security for ${plan.unstated.join(', ')}; nothing is planned for ${plan.unstated.length > 1 ? 'them' : 'it'}.`);
  if (ctx.env.PLAT_TOKEN?.trim()) io.note('PLAT_TOKEN is set: plat cannot tell which of these scopes it carries.');
  else if (missing.length === 0 && plan.scopes.length > 0 && loggedIn) io.note(`Profile ${profile.name} holds all of them.`);
  else if (missing.length > 0) {
    const forArgs = ids.flatMap((id) => ['--for', id]);
    io.note(
      loggedIn
        ? `To add ${missing.join(' ')}: ${suggest(ctx, ['login', ...forArgs])}`
        : `To sign in with just these: ${suggest(ctx, ['login', ...forArgs], { baseUrl: profile.baseUrl === baseUrl ? undefined : baseUrl })}`,
    );
  }
}
