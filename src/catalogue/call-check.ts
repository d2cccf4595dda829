/**
 * `plat call`'s look before it leaps: with the platform's API description cached (by `plat op`), warn about a
 * path or method the document does not list, and find the scopes an operation needs that the session lacks.
 * Reads only the cache, never the network, and never stops the call: the server has the last word.
 */
import type { Context } from '../context.js';
import type { Profile } from '../store/types.js';
import { CALL_CHECK_MAX_AGE_MS, missingScopes, operationsFor, pathBelow, readCachedIndex } from './openapi.js';

export interface CallCheck {
  method: string;
  url: URL;
  baseUrl: string | undefined;
  /** The profile whose session will be used; undefined when no token is sent (--anonymous). */
  profile: Profile | undefined;
}

/** Scopes the description says the operation needs and the session lacks: the caller decides whether to say so. */
export interface ScopeShortfall {
  operation: string;
  missing: string[];
}

export async function checkCall(ctx: Context, call: CallCheck): Promise<ScopeShortfall | undefined> {
  try {
    const { baseUrl } = call;
    if (!baseUrl) return;
    const index = await readCachedIndex(ctx.configDir, baseUrl, ctx.now(), CALL_CHECK_MAX_AGE_MS);
    if (!index) return;
    const below = pathBelow(new URL(baseUrl).pathname, call.url.pathname);
    if (below === undefined) return; // not the platform's API: nothing to check it against
    const path = below || '/';
    const method = call.method.toUpperCase();
    const onPath = operationsFor(index, path);
    if (onPath.length === 0) {
      ctx.io.warn(`${path} is not in the platform's API description; check the path (plat op lists the operations).`);
      return;
    }
    const op = onPath.find((o) => o.method === method);
    if (!op) {
      if (method === 'HEAD' && onPath.some((o) => o.method === 'GET')) return; // HEAD goes with GET
      const has = onPath.map((o) => o.method).join(', ');
      ctx.io.warn(`The platform's API description has no ${method} ${onPath[0]!.path} (it has ${has}).`);
      return;
    }
    const profile = call.profile;
    if (!profile?.loggedIn || !profile.scopes || ctx.env.PLAT_TOKEN?.trim()) return;
    const missing = missingScopes(op, profile.scopes);
    if (missing.length === 0) return;
    // Not said here: a server that refuses with insufficient_scope names the scope itself (exit 5), and one that
    // accepts proves the description wrong. plat call says it only when the server refuses without naming one.
    return { operation: `${method} ${op.path}`, missing };
  } catch {
    // A check that cannot run is no reason to keep the call from being made.
    return undefined;
  }
}
