/**
 * `plat logout`: revoke the refresh token, then the access token (RFC 7009), then forget them locally. A failed
 * revocation is reported but never keeps the tokens on disk; the profile keeps its base URL and registration.
 */
import type { Context } from '../context.js';
import { InterruptedError, NetworkError } from '../errors.js';
import { mayRevoke } from '../oauth/client.js';
import { RevocationRefusedError, revokeToken } from '../oauth/tokens.js';
import type { DpopKey } from '../oauth/dpop.js';
import { credentialsOf, loadSession, type ActiveSession } from './tokens/access.js';
import { endSession } from './tokens/end-session.js';
import { sessionDiscovery } from './discovery/session-issuer.js';
import { clockTime } from './tokens/no-refresh-token.js';
import { DamagedDataError } from '../store/atomic.js';
import type { Profile } from '../store/types.js';

export interface LogoutResult {
  profile: string;
  wasLoggedIn: boolean;
  revoked: boolean;
  /** The authorization server offers no revocation endpoint: the tokens were only forgotten here. */
  revocationUnsupported?: boolean;
  revocationErrors: string[];
}

export async function logoutProfile(ctx: Context, name: string, options: { revoke: boolean }): Promise<LogoutResult> {
  return ctx.withLock(name, async () => {
    const profiles = await ctx.profiles();
    const profile = await profiles.load(name);
    let active: Awaited<ReturnType<typeof loadSession>>;
    try {
      active = profile ? await loadSession(ctx, profile, { locked: true }) : undefined;
    } catch (error) {
      if (!(error instanceof DamagedDataError) || !profile) throw error;
      // A session plat cannot read cannot be revoked, but logging out must still forget it.
      const store = await ctx.tokenStore(profile.tokenStore);
      await endSession(ctx, { profile, store });
      return { profile: name, wasLoggedIn: true, revoked: false, revocationErrors: ['The stored session was damaged, so plat could not read it to revoke it.'] };
    }
    if (!profile || !active) {
      // A session that ended on its own is cleared too: after logout, anonymous calls are the user's choice.
      if (profile?.loggedIn || profile?.sessionEnded) {
        const { sessionEnded: _ended, ...rest } = profile;
        await profiles.save({ ...rest, loggedIn: false });
      }
      await forgetUncommitted(ctx, name, profile);
      return { profile: name, wasLoggedIn: false, revoked: false, revocationErrors: [] };
    }
    const { unsupported, errors } = options.revoke ? await revokeSession(ctx, active) : { unsupported: false, errors: [] };
    await endSession(ctx, active);
    return {
      profile: name,
      wasLoggedIn: true,
      revoked: options.revoke && !unsupported && errors.length === 0,
      ...(unsupported ? { revocationUnsupported: true } : {}),
      revocationErrors: errors,
    };
  });
}

/**
 * Revokes the refresh token, then the access token (RFC 7009), at the endpoints of the issuer that issued them,
 * never anywhere else. Never throws for a failed revocation (but for Ctrl-C): the failures come back as sentences.
 * A server whose metadata does not let public clients revoke is not asked, and the sentence says so. Many servers
 * revoke both tokens with the refresh token; one that then answers the second request with 400 about the token
 * no longer knows it, which RFC 7009 §2.2 makes a success.
 */
export async function revokeSession(ctx: Context, active: ActiveSession): Promise<{ unsupported: boolean; errors: string[] }> {
  const { profile } = active;
  const errors: string[] = [];
  let unsupported = false;
  try {
    const discovery = await sessionDiscovery(ctx, profile);
    if (typeof discovery.as.revocation_endpoint !== 'string') return { unsupported: true, errors };
    const deps = { fetch: (await ctx.http()).fetch };
    const credentials = credentialsOf(ctx, active);
    const until = active.session.expiresAt !== undefined ? ` (the access token until ${clockTime(active.session.expiresAt, ctx.now())})` : '';
    // Always asked, with the credentials plat has: metadata that leaves `none` out of the revocation methods is
    // often just incomplete (such servers revoke a public client's tokens when asked). What the server answered
    // is what the user is told; when it refused, the listed methods explain why.
    const allowed = mayRevoke(discovery.as, credentials.registration);
    const listedOnly = allowed.ok ? '' : ` (its metadata lists only ${allowed.methods.join(', ')} for revocation, not public clients like plat)`;
    const guessed = discovery.filledFromSpec.includes('revocation_endpoint');
    let refreshRevoked = false;
    const tokens: Array<[string | undefined, 'refresh_token' | 'access_token']> = [
      [active.session.refreshToken, 'refresh_token'],
      [active.session.accessToken, 'access_token'],
    ];
    for (const [token, hint] of tokens) {
      if (!token) continue;
      try {
        await revokeToken(deps, discovery.as, credentials, token, hint, active.session.dpopKey as DpopKey | undefined);
        if (hint === 'refresh_token') refreshRevoked = true;
      } catch (error) {
        if (error instanceof InterruptedError) throw error;
        if (error instanceof RevocationRefusedError) {
          if (error.reason === 'token' && hint === 'access_token' && refreshRevoked) continue;
          // The documented path guessed for a server whose metadata lists no revocation: nothing there means none.
          if (error.reason === 'missing' && guessed) return { unsupported: true, errors };
          if (error.reason === 'client') {
            // The same client would be refused for the other token too.
            errors.push(`${error.message.replace(/\.$/, '')}${listedOnly}. The tokens stay valid at the server until they expire${until}.`);
            break;
          }
          if (error.reason === 'token_type') {
            errors.push(`${error.message} It stays valid at the server until it expires${hint === 'access_token' ? until : ''}.`);
            continue;
          }
        }
        if (!errors.includes((error as Error).message)) errors.push((error as Error).message);
        // A server out of reach for the first token is out of reach for the second: one fact, one message.
        if (error instanceof NetworkError) break;
      }
    }
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    errors.push((error as Error).message);
  }
  return { unsupported, errors };
}

/**
 * A login killed after storing its tokens but before its profile said so leaves tokens that no profile points to.
 * A logout removes them too: it is what someone runs to be sure nothing is left. The keychain is asked only when
 * the profile recorded it (or PLAT_TOKEN_STORE names it), so a logout when logged out stays cheap.
 */
async function forgetUncommitted(ctx: Context, name: string, profile: Profile | undefined): Promise<void> {
  const { parseTokenStoreEnv } = await import('../store/select.js');
  const kind = profile?.tokenStore ?? parseTokenStoreEnv(ctx.env.PLAT_TOKEN_STORE) ?? 'file';
  try {
    await (await ctx.tokenStore(kind)).delete(name);
  } catch {
    // nothing there to remove, or a store out of reach: nothing a logged-out profile can do about it
  }
}

/**
 * `plat logout --forget`: after logging out, the profile itself goes: its file (base URL, registration, user), a
 * confidential integration's kept secret, and the current-profile choice when it named this profile. The server's
 * copy of a registration is not deleted (plat never manages registrations there); it simply goes unused.
 */
export async function forgetProfile(ctx: Context, name: string): Promise<void> {
  await ctx.withLock(name, async () => {
    const profiles = await ctx.profiles();
    const profile = await profiles.load(name, { ignoreDamaged: true });
    const { parseTokenStoreEnv } = await import('../store/select.js');
    const kind = profile?.tokenStore ?? parseTokenStoreEnv(ctx.env.PLAT_TOKEN_STORE) ?? 'file';
    const store = await ctx.tokenStore(kind).catch(() => undefined);
    if (store) {
      const { dropKeptClientSecret } = await import('./tokens/client-secret.js');
      await dropKeptClientSecret(store, name);
    }
    await profiles.delete(name);
  });
  if (ctx.globals.currentProfile === name) {
    const { clearCurrentProfile } = await import('../store/current-profile.js');
    await clearCurrentProfile(ctx.configDir);
  }
}
