/**
 * `plat logout`: revoke the refresh token, then the access token (RFC 7009), then forget them locally. A failed
 * revocation is reported but never keeps the tokens on disk; the profile keeps its base URL and registration.
 */
import type { Context } from '../context.js';
import { InterruptedError } from '../errors.js';
import { revokeToken } from '../oauth/tokens.js';
import { credentialsOf, endSession, loadSession } from './access.js';
import { getDiscovery } from './discovery-cache.js';

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
    const active = profile ? await loadSession(ctx, profile) : undefined;
    if (!profile || !active) {
      if (profile?.loggedIn) await profiles.save({ ...profile, loggedIn: false });
      return { profile: name, wasLoggedIn: false, revoked: false, revocationErrors: [] };
    }
    const errors: string[] = [];
    if (options.revoke) {
      try {
        const discovery = await getDiscovery(ctx, profile.baseUrl!);
        const deps = { fetch: (await ctx.http()).fetch };
        const credentials = credentialsOf(active);
        const tokens: Array<[string | undefined, 'refresh_token' | 'access_token']> = [
          [active.session.refreshToken, 'refresh_token'],
          [active.session.accessToken, 'access_token'],
        ];
        for (const [token, hint] of tokens) {
          if (!token) continue;
          try {
            await revokeToken(deps, discovery.as, credentials, token, hint);
          } catch (error) {
            if (error instanceof InterruptedError) throw error;
            errors.push((error as Error).message);
          }
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
