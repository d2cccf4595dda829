/**
 * `plat api <path>`: gh's `api` shape over plat call's runner (one implementation, two argument shapes). The path
 * comes first; the method is GET unless -X names one, or POST when fields (-f/-F) or --input give a body, as in gh.
 * The operations listing is `plat op`.
 */
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { CallFlags } from '../../requests/prepare.js';

export interface ApiFlags extends CallFlags {
  method?: string;
}

/** The method gh would use: -X, else POST when a body or fields are given, else GET. */
function apiMethod(flags: ApiFlags): string {
  if (flags.method !== undefined) {
    const method = flags.method.trim().toUpperCase();
    if (!/^[A-Z]+$/.test(method)) throw new UsageError(`-X expects an HTTP method (GET, POST, PUT, PATCH, DELETE, …); got "${flags.method}".`);
    return method;
  }
  const fields = (flags.field?.length ?? 0) + (flags.typedField?.length ?? 0);
  return fields > 0 || flags.input !== undefined ? 'POST' : 'GET';
}

/** Flags that print the response as JSON (paging, --jq): with --silent there would be nothing to print them for. */
const PRINTING_FLAGS = {
  paginate: '--paginate',
  ndjson: '--ndjson',
  slurp: '--slurp',
  maxPages: '--max-pages',
  maxItems: '--max-items',
  items: '--items',
  next: '--next',
  jq: '--jq',
} as const;

export async function run(ctx: Context, path: string, flags: ApiFlags): Promise<void> {
  if (flags.silent) {
    const clash = Object.entries(PRINTING_FLAGS).find(([flag]) => flags[flag as keyof typeof PRINTING_FLAGS] !== undefined);
    if (clash) throw new UsageError(`--silent prints no body, so ${clash[1]} has nothing to shape. Drop one of the two.`);
  }
  const { method: _method, ...callFlags } = flags;
  const { run: call } = await import('./call.js');
  await call(ctx, apiMethod(flags), path, callFlags);
}
