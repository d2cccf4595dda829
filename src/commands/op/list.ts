/**
 * `plat op [filter]`: the operations the platform's `/openapi.json` lists — operationId, method,
 * path, summary, and the scopes a token needs — fetched without a token and cached (the cache also feeds `plat op`,
 * `plat call`'s check, `plat scopes plan` and the completions).
 */
import { getApiIndex } from '../../catalogue/fetch-openapi.js';
import { listedOnly, type ApiIndex, type ListedOperation } from '../../catalogue/openapi.js';
import type { Context } from '../../context.js';
import { sanitize } from '../../terminal/text.js';
import { currentProfile, requirePlatform } from '../../session/index.js';
import { iso, printJson } from '../shared/format.js';
import { age, table } from '../shared/table.js';

export interface ApiFlags {
  refresh?: boolean;
}

/** `plat op --json`. */
interface ApiOutput {
  baseUrl: string;
  /** The document's URL. */
  source: string;
  title: string | null;
  version: string | null;
  fetchedAt: string;
  operations: ListedOperation[];
}

export function matches(op: ListedOperation, filter: string): boolean {
  const haystack = [op.method, op.path, op.summary ?? '', op.operationId ?? '', ...(op.security ?? []).flat(), ...(op.scopes ?? [])]
    .join(' ')
    .toLowerCase();
  return filter
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => haystack.includes(word));
}

export async function run(ctx: Context, filter: string | undefined, flags: ApiFlags, loaded?: { index: ApiIndex; baseUrl: string }): Promise<void> {
  const { io } = ctx;
  const baseUrl = loaded?.baseUrl ?? requirePlatform(ctx, await currentProfile(ctx));
  const index = loaded?.index ?? (await getApiIndex(ctx, baseUrl, { refresh: flags.refresh }));
  const operations = filter ? index.operations.filter((op) => matches(op, filter)) : index.operations;

  if (ctx.globals.json) {
    const output: ApiOutput = {
      baseUrl,
      source: index.source,
      title: index.title,
      version: index.version,
      fetchedAt: iso(index.fetchedAt)!,
      operations: operations.map((op) => ({ ...listedOnly(op), security: op.security ?? null })),
    };
    printJson(io, output);
    return;
  }
  // On a terminal the rows fit its width (summaries cut, never scopes); piped, they stay whole for grep and awk.
  const columns = io.stdoutIsTTY ? (io.stdout as { columns?: number }).columns : undefined;
  io.out(
    table(
      operations.map((op) => [op.operationId ?? '-', op.method, op.path, op.summary ?? '', scopesText(op)]),
      [io.bold, undefined, undefined, undefined, io.dim],
      columns ? { width: columns, shrink: 3 } : undefined,
    ),
  );
  const title = sanitize([index.title, index.version].filter(Boolean).join(' ') || index.source);
  const shown = filter ? `${operations.length} of ${index.operations.length}` : `${operations.length}`;
  // "1 of 37 operations", "1 operation": the noun agrees with the last number said.
  const counted = filter ? index.operations.length : operations.length;
  io.note(`${shown} operation${counted === 1 ? '' : 's'} in ${title}, read ${age(index.fetchedAt, ctx.now())}.`);
  if (filter && operations.length === 0) io.note(`Nothing matches "${filter}"; plat op without a filter lists them all.`);
  else if (operations.some((op) => op.operationId)) io.note('Call one with plat op <operationId> --<parameter> value; plat op <operationId> --help describes it.');
}

/** Alternatives joined with "|", each a space-separated scope set; "-" none needed, "token" any token. */
function scopesText(op: ListedOperation): string {
  if (op.security) {
    const scoped = op.security.filter((alt) => alt.length > 0);
    if (scoped.length > 0) return scoped.map((alt) => alt.join(' ')).join(' | ');
  }
  if (op.scopes === null) return '';
  if (op.scopes.length === 0) return op.anonymous === false ? 'token' : '-';
  return op.scopes.join(' ');
}
