/**
 * `plat logout`: revoke the refresh token, then the access token (RFC 7009), then forget them locally. A failed
 * revocation is reported but never keeps the tokens on disk; the profile keeps its base URL and registration.
 */
import type { Context } from '../context.js';
import { InterruptedError } from '../errors.js';
import { mayRevoke } from '../oauth/client.js';
import { RevocationRefusedError, revokeToken } from '../oauth/tokens.js';
import { credentialsOf, endSession, loadSession } from './access.js';
import { getDiscovery } from './discovery-cache.js';
import { clockTime } from './no-refresh-token.js';
import { DamagedDataError } from '../store/atomic.js';
import type { Profile } from '../store/types.js';

export interface LogoutResult {
  profile: string;
  wasLoggedIn: boolean;
  revoked: boolean;
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
      if (profile?.loggedIn) await profiles.save({ ...profile, loggedIn: false });
      await forgetUncommitted(ctx, name, profile);
      return { profile: name, wasLoggedIn: false, revoked: false, revocationErrors: [] };
    }
    const errors: string[] = [];
    if (options.revoke) {
      try {
        const discovery = await getDiscovery(ctx, profile.baseUrl!);
        const deps = { fetch: (await ctx.http()).fetch };
        const credentials = credentialsOf(active);
        const until = active.session.expiresAt !== undefined ? ` (the access token until ${clockTime(active.session.expiresAt, ctx.now())})` : '';
        const allowed = mayRevoke(discovery.as, credentials.registration);
        if (!allowed.ok) {
          errors.push(
            `The server does not let public clients like plat revoke tokens (its revocation endpoint accepts only ${allowed.methods.join(', ')}), so they stay valid at the server until they expire${until}.`,
          );
        } else {
          errors.push(...(await revokeBoth(deps, discovery.as, credentials, active.session, until)));
        }
      } catch (error) {
        if (error instanceof InterruptedError) throw error;
        errors.push((error as Error).message);
      }
    }
    await endSession(ctx, active);
    return { profile: name, wasLoggedIn: true, revoked: options.revoke && errors.length === 0, revocationErrors: errors };
  });
}

/**
 * The refresh token first (it outlives the access token), then the access token. Many servers revoke both with the
 * refresh token; one that then answers the second request with 400 about the token no longer knows it, which RFC
 * 7009 §2.2 makes a success. Returns what went wrong, in sentences.
 */
async function revokeBoth(
  deps: Parameters<typeof revokeToken>[0],
  as: Parameters<typeof revokeToken>[1],
  credentials: Parameters<typeof revokeToken>[2],
  session: { refreshToken?: string; accessToken: string },
  until: string,
): Promise<string[]> {
  const errors: string[] = [];
  let refreshRevoked = false;
  const tokens: Array<[string | undefined, 'refresh_token' | 'access_token']> = [
    [session.refreshToken, 'refresh_token'],
    [session.accessToken, 'access_token'],
  ];
  for (const [token, hint] of tokens) {
    if (!token) continue;
    try {
      await revokeToken(deps, as, credentials, token, hint);
      if (hint === 'refresh_token') refreshRevoked = true;
    } catch (error) {
      if (error instanceof InterruptedError) throw error;
      if (error instanceof RevocationRefusedError) {
        if (error.reason === 'token' && hint === 'access_token' && refreshRevoked) continue;
        if (error.reason === 'client') {
          // The same client would be refused for the other token too.
          errors.push(`${error.message} The tokens stay valid at the server until they expire${until}.`);
          break;
        }
        if (error.reason === 'token_type') {
          errors.push(`${error.message} It stays valid at the server until it expires${hint === 'access_token' ? until : ''}.`);
          continue;
        }
      }
      errors.push((error as Error).message);
    }
  }
  return errors;
}

/**
 * A login killed after storing its tokens but before its profile said so leaves tokens that no profile points to.
 * A logout removes them too: it is what someone runs to be sure nothing is left. The keychain is asked only when
 * the profile recorded it (or PLAT_TOKEN_STORE names it), so a logout when logged out stays cheap.
 */
async function forgetUncommitted(ctx: Context, name: string, profile: Profile | undefined): Promise<void> {
  const { parseTokenStoreEnv } = await import('../store/select.js');
  const kind = parseTokenStoreEnv(ctx.env.PLAT_TOKEN_STORE) ?? profile?.tokenStore ?? 'file';
  try {
    await (await ctx.tokenStore(kind)).delete(name);
  } catch {
    // nothing there to remove, or a store out of reach: nothing a logged-out profile can do about it
  }
}
