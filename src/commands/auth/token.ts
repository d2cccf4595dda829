import type { Context } from '../../context.js';
import { accessToken, type TokenSource } from '../../session/index.js';
import { parsePositiveInt } from '../../requests/values.js';
import { iso, printJson } from '../shared/format.js';

export interface TokenFlags {
  minTtl?: string;
}

/** A week: longer than any access token a server hands out, short enough to catch a typo in milliseconds. */
export const MAX_MIN_TTL_SECONDS = 7 * 86_400;

/** The access token and nothing else, for `$(plat token)`: the only command that prints a secret, by design. */
export async function run(ctx: Context, flags: TokenFlags = {}): Promise<void> {
  const minTtl = parsePositiveInt(flags.minTtl, '--min-ttl', MAX_MIN_TTL_SECONDS);
  const source = await accessToken(ctx, { minTtlMs: minTtl === undefined ? undefined : minTtl * 1000 });
  if (ctx.globals.json) {
    printJson(ctx.io, describeToken(ctx, source));
    return;
  }
  ctx.io.out(`${source.token}\n`);
}

/** The documented `plat token --json` shape (snake_case, like an OAuth token response). */
interface TokenJson {
  access_token: string;
  token_type: string;
  /** RFC 3339; null when the server did not say (and for PLAT_TOKEN, whose expiry plat cannot know). */
  expires_at: string | null;
  /** Whole seconds left, never negative; null with expires_at. */
  expires_in: number | null;
  /** Granted scopes; null for PLAT_TOKEN. */
  scopes: string[] | null;
  /** The profile whose session this is; null for PLAT_TOKEN. */
  profile: string | null;
  /** The origin the token is for; null when PLAT_TOKEN is used and no base URL is given. */
  base_url: string | null;
}

function describeToken(ctx: Context, source: TokenSource): TokenJson {
  if (source.kind === 'env') {
    return { access_token: source.token, token_type: 'Bearer', expires_at: null, expires_in: null, scopes: null, profile: null, base_url: source.baseUrl ?? null };
  }
  const { session, profile } = source;
  const expiresAt = session.expiresAt;
  return {
    access_token: source.token,
    token_type: session.tokenType || 'Bearer',
    expires_at: iso(expiresAt),
    expires_in: expiresAt === undefined ? null : Math.max(0, Math.floor((expiresAt - ctx.now()) / 1000)),
    scopes: session.scopes,
    profile: profile.name,
    base_url: profile.baseUrl ?? null,
  };
}
