import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { accessToken, boundTokenError, dpopProofFor, isDpopBound, type TokenSource } from '../../session/index.js';
import { parsePositiveInt } from '../../requests/values.js';
import { iso, printJson } from '../shared/format.js';

export interface TokenFlags {
  minTtl?: string;
  /** On a DPoP-bound session: hand out the token anyway, for a program that makes its own proofs. */
  dpopBound?: boolean;
  /** "METHOD URL": a fresh DPoP proof for that request (implies --dpop-bound). */
  dpopProof?: string;
  /** The server's DPoP-Nonce, carried by --dpop-proof's proof. */
  dpopNonce?: string;
}

/** A week: longer than any access token a server hands out, short enough to catch a typo in milliseconds. */
export const MAX_MIN_TTL_SECONDS = 7 * 86_400;

/** The access token and nothing else, for `$(plat token)`: the only command that prints a secret, by design. */
export async function run(ctx: Context, flags: TokenFlags = {}): Promise<void> {
  const minTtl = parsePositiveInt(flags.minTtl, '--min-ttl', MAX_MIN_TTL_SECONDS);
  if (flags.dpopNonce !== undefined && flags.dpopProof === undefined) throw new UsageError('--dpop-nonce goes with --dpop-proof "METHOD URL".');
  const request = flags.dpopProof === undefined ? undefined : parseProofRequest(flags.dpopProof);
  const source = await accessToken(ctx, { minTtlMs: minTtl === undefined ? undefined : minTtl * 1000 });
  const bound = isDpopBound(source);
  // A bound token is no bearer token: handed out only to a program that asked for it knowing so.
  const handOut = !bound || flags.dpopBound === true || request !== undefined;
  if (!bound && (flags.dpopBound || request)) {
    throw new UsageError('--dpop-bound and --dpop-proof are for a DPoP-bound session, and this one holds a bearer token: plat token prints it as is.');
  }
  const proof = request ? await dpopProofFor(ctx, source, { ...request, nonce: flags.dpopNonce }) : undefined;
  if (ctx.globals.json) {
    const json = describeToken(ctx, source, handOut);
    printJson(ctx.io, proof ? { ...json, dpop_proof: proof.proof } : json);
    return;
  }
  if (!handOut) throw boundTokenError(ctx, source);
  ctx.io.out(`${proof ? proof.proof : source.token}\n`);
}

/** --dpop-proof's "METHOD URL". */
function parseProofRequest(value: string): { method: string; url: string } {
  const [method, url, ...rest] = value.trim().split(/\s+/);
  if (!method || !url || rest.length) throw new UsageError(`--dpop-proof expects "METHOD URL" (say "GET https://school.example.com/api/courses"); got "${value}".`);
  return { method: method.toUpperCase(), url };
}

/** The documented `plat token --json` shape (snake_case, like an OAuth token response). */
interface TokenJson {
  /** null on a DPoP-bound session unless --dpop-bound or --dpop-proof asked for it. */
  access_token: string | null;
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
  /** A DPoP-bound session's key thumbprint (RFC 7638), the token's cnf.jkt; absent for Bearer. */
  dpop_jkt?: string;
}

function describeToken(ctx: Context, source: TokenSource, handOut = true): TokenJson {
  if (source.kind === 'env') {
    return { access_token: source.token, token_type: 'Bearer', expires_at: null, expires_in: null, scopes: null, profile: null, base_url: source.baseUrl ?? null };
  }
  const { session, profile } = source;
  const expiresAt = session.expiresAt;
  return {
    access_token: handOut ? source.token : null,
    token_type: session.tokenType || 'Bearer',
    expires_at: iso(expiresAt),
    expires_in: expiresAt === undefined ? null : Math.max(0, Math.floor((expiresAt - ctx.now()) / 1000)),
    scopes: session.scopes,
    profile: profile.name,
    base_url: profile.baseUrl ?? null,
    ...(session.tokenType === 'DPoP' && profile.dpopJkt ? { dpop_jkt: profile.dpopJkt } : {}),
  };
}
