/**
 * A confidential integration's client secret outlives logout: it is the integration's credential, not part of the
 * user's session, and the contract wants a later `plat login` to need no flags. It is kept in the profile's own
 * token store (keychain, or the 0600 file) under `<profile>.client-secret`, never in the config file; login puts
 * it back beside the tokens and removes the kept copy.
 */
import type { Context } from '../../context.js';
import type { Profile, TokenStore } from '../../store/types.js';

const SUFFIX = '.client-secret';

/** The store entry name, or undefined when the profile's name is too long to carry the suffix (then nothing is kept). */
function entryName(profile: string): string | undefined {
  const name = `${profile}${SUFFIX}`;
  return name.length <= 64 ? name : undefined;
}

/** Keeps `secret` for `profile` in `store`, marked as obtained `now` (the entry is a session-shaped record). */
export async function keepClientSecret(store: TokenStore, profile: string, secret: string, now: number): Promise<void> {
  const name = entryName(profile);
  if (!name) return;
  // The store holds sessions; a kept secret is one with no tokens, which no command mistakes for a session
  // because nothing reads this entry name as a profile.
  await store.set(name, { accessToken: '', tokenType: 'none', obtainedAt: now, scopes: [], clientSecret: secret });
}

export async function readKeptClientSecret(ctx: Context, profile: Profile): Promise<string | undefined> {
  const name = entryName(profile.name);
  if (!name) return undefined;
  try {
    return (await (await ctx.tokenStore(profile.tokenStore)).get(name))?.clientSecret;
  } catch {
    return undefined;
  }
}

export async function dropKeptClientSecret(store: TokenStore, profile: string): Promise<void> {
  const name = entryName(profile);
  if (!name) return;
  await store.delete(name).catch(() => {});
}
