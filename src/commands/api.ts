/**
 * `plat api [filter]`: the operations the platform's `/openapi.json` lists — method, path, summary, and the scopes
 * a token needs — fetched without a token and cached for an hour (the cache also feeds `plat call`'s check and
 * the completions).
 */
import { getApiIndex } from '../catalogue/fetch-openapi.js';
import type { Operation } from '../catalogue/openapi.js';
import type { Context } from '../context.js';
import { sanitize } from '../text.js';
import { loadProfile, requireBaseUrl } from '../session/profile.js';
import { iso, printJson } from './format.js';
import { age, table } from './table.js';

export interface ApiFlags {
  refresh?: boolean;
}

/** `plat api --json`. */
export interface ApiOutput {
  baseUrl: string;
  /** The document's URL. */
  source: string;
  title: string | null;
  version: string | null;
  fetchedAt: string;
  operations: Operation[];
}

function matches(op: Operation, filter: string): boolean {
  const haystack = [op.method, op.path, op.summary ?? '', op.operationId ?? '', ...(op.scopes ?? [])].join(' ').toLowerCase();
  return filter
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => haystack.includes(word));
}

export async function run(ctx: Context, filter: string | undefined, flags: ApiFlags): Promise<void> {
  const { io } = ctx;
  const baseUrl = requireBaseUrl(ctx, await loadProfile(ctx));
  const index = await getApiIndex(ctx, baseUrl, { refresh: flags.refresh });
  const operations = filter ? index.operations.filter((op) => matches(op, filter)) : index.operations;

  if (ctx.globals.json) {
    const output: ApiOutput = {
      baseUrl,
      source: index.source,
      title: index.title,
      version: index.version,
      fetchedAt: iso(index.fetchedAt)!,
      operations,
    };
    printJson(io, output);
    return;
  }
  io.out(
    table(
      operations.map((op) => [op.method, op.path, op.summary ?? '', scopesText(op)]),
      [io.bold, undefined, undefined, io.dim],
    ),
  );
  const title = sanitize([index.title, index.version].filter(Boolean).join(' ') || index.source);
  const shown = filter ? `${operations.length} of ${index.operations.length}` : `${operations.length}`;
  io.note(`${shown} operation${operations.length === 1 ? '' : 's'} in ${title}, read ${age(index.fetchedAt, ctx.now())}.`);
}

function scopesText(op: Operation): string {
  if (op.scopes === null) return '';
  if (op.scopes.length === 0) return op.anonymous === false ? 'token' : '-';
  return op.scopes.join(' ');
}
