/**
 * Which credentials a command may use, decided once per invocation: PLAT_TOKEN, the profile's stored session, or
 * none — and why none. A stored session belongs to the base URL (origin) and issuer it was issued for: when
 * --base-url / PLAT_BASE_URL names another platform, the session is not used for it, and a session that ended
 * without the user's word (refresh token rejected) is not silently replaced by anonymous access.
 *
 * The one way to a token for a request: every verb of the front door (session/index.ts) that yields a token or
 * sends one to the API starts at bindSession, and only a session bound here is refreshed for it (tokens/refresh.ts's
 * freshToken).
 * The login, logout and refresh flows read the stored session themselves too, to rotate or revoke it at its issuer.
 */
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { Profile } from '../../store/types.js';
import { loadSession, type ActiveSession } from '../tokens/access.js';
import { freshToken } from '../tokens/refresh.js';
import { explicitBaseUrl, resolveProfile } from './profile.js';
import { noSessionError, type Unbound } from '../no-session.js';

/**
 * The invocation's resolved target: the profile it acts on, the platform (base URL) it talks to, and the
 * credentials it may use there (PLAT_TOKEN; the stored session with the store that holds it; or none, and why).
 * The front door (index.ts) works it out once per verb and passes it down, so the client, the token and identity
 * steps below never go back to the profile file or the token store to work it out again. A long-lived server
 * (plat mcp, plat proxy, a library client) calls a verb per request, so a login made meanwhile is picked up.
 */
export type Binding =
  | { kind: 'env'; token: string; baseUrl: string | undefined; profile: Profile }
  | { kind: 'session'; baseUrl: string; profile: Profile; active: ActiveSession }
  | Unbound;

export async function bindSession(ctx: Context, given?: Profile): Promise<Binding> {
  const { profile, named } = given ? { profile: given, named: explicitBaseUrl(ctx) } : await resolveProfile(ctx);
  const baseUrl = named ?? profile.baseUrl;
  const fromEnv = ctx.env.PLAT_TOKEN?.trim();
  if (fromEnv) {
    ctx.secrets.remember(fromEnv);
    return { kind: 'env', token: fromEnv, baseUrl, profile };
  }
  if (named && profile.baseUrl && named !== profile.baseUrl && (profile.loggedIn || profile.sessionEnded)) {
    // The ways out: a profile signed in there already (this one was named explicitly), or a login under a profile of
    // its own (signing this one in there would move it, and end its session).
    const { freshProfileName, signedInTo } = await import('./platform-profile.js');
    const holders = (await signedInTo(ctx, named)).map((p) => p.name);
    return { kind: 'none', reason: 'other-platform', baseUrl, profile, elsewhere: { holders, newProfile: await freshProfileName(ctx, named) } };
  }
  if (profile.sessionEnded && !profile.loggedIn) return { kind: 'none', reason: 'ended', baseUrl, profile };
  const found = await loadSession(ctx, profile);
  if (!found) return { kind: 'none', reason: 'not-logged-in', baseUrl, profile };
  const active = ctx.env.PLAT_TOKEN_STORE ? await (await import('../tokens/store-move.js')).moveToRequestedStore(ctx, found) : found;
  return { kind: 'session', baseUrl: active.profile.baseUrl!, profile: active.profile, active };
}

export type TokenSource =
  | { kind: 'env'; token: string; profile: Profile; baseUrl: string | undefined }
  | ({ kind: 'session'; token: string } & ActiveSession);

/** The stored session a command needs (refresh, logout of it, status --check), honouring the origin rule. */
export async function requireSession(ctx: Context, profile?: Profile): Promise<ActiveSession> {
  const binding = await bindSession(ctx, profile);
  if (binding.kind === 'session') return binding.active;
  if (binding.kind === 'env') {
    throw new UsageError('PLAT_TOKEN is set: it is used instead of the stored session, which this command needs. Unset PLAT_TOKEN to use the stored session.');
  }
  throw noSessionError(ctx, binding);
}

/**
 * A usable token for a command that needs one (exit 4 otherwise): PLAT_TOKEN, or the session's, refreshed first
 * when it is about to expire (`force`: even if it looks valid, after the server refused it). `minTtlMs`: refresh
 * first when the token would expire sooner (`plat token --min-ttl`, the library's `token({ minTtl })`, so a long
 * job starts with a token that lasts), and fail with an AuthError when even a fresh token does not last that long.
 * PLAT_TOKEN's expiry is unknown to plat and is not checked.
 */
export async function getAccessToken(ctx: Context, options: { force?: boolean; binding?: Binding; minTtlMs?: number } = {}): Promise<TokenSource> {
  const binding = options.binding ?? (await bindSession(ctx));
  if (binding.kind === 'env') {
    ctx.secrets.remember(binding.token);
    return { kind: 'env', token: binding.token, profile: binding.profile, baseUrl: binding.baseUrl };
  }
  if (binding.kind === 'none') throw noSessionError(ctx, binding);
  return freshToken(ctx, binding.active, options.force, options.minTtlMs);
}
