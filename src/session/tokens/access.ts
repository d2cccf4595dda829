/**
 * A profile's stored session as it is now: loaded (the token store is the truth; the profile's copies are repaired),
 * with the client credentials it refreshes and revokes with. The other steps of a session's life have rooms beside
 * this one: refresh.ts (fresh tokens under the lock), end-session.ts, dpop-key.ts (the key a bound session needs).
 *
 * These steps know nothing of PLAT_TOKEN or of which platform an invocation names, so nothing outside the session
 * calls them: they take the profile the caller worked out (profile/binding.ts for a command, login, logout), and a
 * token is handed out (refresh.ts freshToken) only for a session profile/binding.ts bound, through the verbs of the
 * session's front door, session/index.ts.
 */
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import type { ClientCredentials } from '../../oauth/client.js';
import type { Profile, StoredSession, TokenStore } from '../../store/types.js';
import { suggestCommand } from '../suggest.js';
import { assertDpopKey } from './dpop-key.js';

export interface ActiveSession {
  profile: Profile;
  session: StoredSession;
  store: TokenStore;
}

/**
 * The stored session of `profile`, as the caller worked it out (profile/binding.ts passes the one it resolved; login
 * and logout the one they act on), or undefined when there is none (no error: callers decide). The profile is never
 * looked up again here.
 *
 * The session (token store) and the profile (config file) are two writes. A plat killed between them leaves the
 * profile's copies of expiry and scopes behind the session, or a profile that says logged in over a session that
 * is gone; the token store is the truth. What is returned follows it, and the profile is repaired on disk under
 * the lock (`locked`: the caller holds it already and saves the profile itself).
 */
export async function loadSession(ctx: Context, profile: Profile, options: { locked?: boolean } = {}): Promise<ActiveSession | undefined> {
  if (!profile.loggedIn || !profile.baseUrl) return undefined;
  const store = await ctx.tokenStore(profile.tokenStore);
  let session: StoredSession | undefined;
  try {
    session = await store.get(profile.name);
    // A store that cannot tell "gone" from "out of reach" (a locked keychain) throws here instead.
    if (!session) await store.assertWritable?.(profile.name);
  } catch (error) {
    // Out of reach is not logged out: exit 4, and the profile stays as it is.
    const { unreachableStoreError } = await import('./store-reach.js');
    throw (await unreachableStoreError(ctx, profile, error)) ?? error;
  }
  if (session) ctx.secrets.remember(session.accessToken, session.refreshToken, session.idToken, session.clientSecret);
  // A bound session (RFC 9449) is checked for its key before anything uses it; a bearer one costs nothing more.
  if (session && (session.tokenType === 'DPoP' || session.dpopKey || profile.dpopJkt)) await assertDpopKey(ctx, profile, session, store);
  const agree = session !== undefined && copiesAgree(profile, session);
  if (!agree && !options.locked) await reconcileProfile(ctx, profile.name);
  if (!session) return undefined;
  return { profile: agree ? profile : { ...profile, expiresAt: session.expiresAt, scopes: session.scopes }, session, store };
}

function copiesAgree(profile: Profile, session: StoredSession): boolean {
  const scopes = profile.scopes ?? [];
  return (
    profile.expiresAt === session.expiresAt &&
    scopes.length === session.scopes.length &&
    scopes.every((scope, i) => scope === session.scopes[i])
  );
}

/**
 * Makes the profile agree with the token store again, holding the lock. Best effort: if another plat holds the
 * lock it is a writer that saves the profile itself, and a read-only config dir only keeps the stale copies.
 */
async function reconcileProfile(ctx: Context, name: string): Promise<void> {
  try {
    await ctx.withLock(
      name,
      async () => {
        const profiles = await ctx.profiles();
        const current = await profiles.load(name);
        if (!current?.loggedIn) return;
        const store = await ctx.tokenStore(current.tokenStore);
        const session = await store.get(name);
        if (!session) {
          await store.assertWritable?.(name);
          const { user: _user, expiresAt: _expiresAt, ...rest } = current;
          await profiles.save({ ...rest, loggedIn: false, updatedAt: ctx.now() });
        } else if (!copiesAgree(current, session)) {
          await profiles.save({ ...current, expiresAt: session.expiresAt, scopes: session.scopes, updatedAt: ctx.now() });
        }
      },
      { timeoutMs: 1_000 },
    );
  } catch {
    // the next writer repairs it
  }
}

export function credentialsOf(ctx: Context, active: ActiveSession): ClientCredentials {
  const registration = active.profile.client;
  if (!registration) {
    throw new AuthError(`Profile ${active.profile.name} has no client registration. Run ${suggestCommand(ctx, ['login'], { profile: active.profile.name, device: active.profile.loginMethod === 'device' })} to sign in again.`);
  }
  return { registration, secret: active.session.clientSecret };
}
