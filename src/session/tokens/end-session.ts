/**
 * The end of a session that plat ends itself (a refresh token or client the server refused, a DPoP key gone): the
 * tokens go, the profile says so and why, and what the next login needs stays.
 */
import type { Context } from '../../context.js';
import type { Profile, StoredSession, TokenStore } from '../../store/types.js';

/**
 * Forgets the tokens but keeps base URL and registration (and a confidential client's secret, in the token store),
 * so the next login needs no flags; `forgetClient` drops the registration and its secret too (the server no longer
 * knows it).
 */
export async function endSession(
  ctx: Context,
  active: { profile: Profile; store: TokenStore; session?: StoredSession },
  options: { forgetClient?: boolean; ended?: string } = {},
): Promise<void> {
  const secret = active.session?.clientSecret;
  const { keepClientSecret, dropKeptClientSecret } = await import('./client-secret.js');
  if (secret && !options.forgetClient && active.profile.client?.authMethod === 'client_secret_post') {
    await keepClientSecret(active.store, active.profile.name, secret, ctx.now());
  } else if (options.forgetClient) {
    await dropKeptClientSecret(active.store, active.profile.name);
  }
  await active.store.delete(active.profile.name);
  const profiles = await ctx.profiles();
  const { user: _user, expiresAt: _expiresAt, client, sessionEnded: _ended, ...rest } = active.profile;
  await profiles.save({
    ...rest,
    ...(options.forgetClient ? {} : { client }),
    ...(options.ended ? { sessionEnded: { at: ctx.now(), reason: options.ended } } : {}),
    loggedIn: false,
    updatedAt: ctx.now(),
  });
}
