/**
 * A profile's session lives in the store the profile recorded at login (store/select.ts). PLAT_TOKEN_STORE naming
 * the other store moves it there once, said on stderr: the cron recipe, since a job without a session bus needs
 * the session in the file.
 */
import type { Context } from '../../context.js';
import type { Profile, TokenStore, TokenStoreKind } from '../../store/types.js';
import type { ActiveSession } from './access.js';

/** The words for where a session is kept. */
function storeName(store: Pick<TokenStore, 'kind' | 'location'>): string {
  return store.kind === 'keychain' ? 'the OS keychain' : `${store.location} (mode 0600)`;
}

/** PLAT_TOKEN_STORE, when it names a store other than the session's: the session moves there now, once. */
export async function moveToRequestedStore(ctx: Context, active: ActiveSession): Promise<ActiveSession> {
  const { parseTokenStoreEnv } = await import('../../store/select.js');
  const requested = parseTokenStoreEnv(ctx.env.PLAT_TOKEN_STORE);
  if (!requested || requested === active.store.kind) return active;
  return ctx.withLock(active.profile.name, () => move(ctx, active, requested));
}

async function move(ctx: Context, found: ActiveSession, requested: TokenStoreKind): Promise<ActiveSession> {
  const name = found.profile.name;
  const profiles = await ctx.profiles();
  const profile = (await profiles.load(name)) ?? found.profile;
  const from = await ctx.tokenStore(profile.tokenStore);
  // Re-read under the lock: another plat may have refreshed (or moved) it meanwhile.
  const session = from.kind === requested ? undefined : await from.get(name);
  if (!session) return found;
  const to = await ctx.tokenStore(requested);
  await to.set(name, session);
  const updated: Profile = { ...profile, tokenStore: to.kind, updatedAt: ctx.now() };
  await profiles.save(updated);
  let left = '';
  try {
    await from.delete(name);
  } catch {
    left = ` The copy in ${storeName(from)} could not be removed now; plat no longer reads it.`;
  }
  ctx.io.note(`Moved the session of profile ${name} from ${storeName(from)} to ${storeName(to)}, as PLAT_TOKEN_STORE=${requested} asks; it stays there from now on.${left}`);
  return { profile: { ...updated, expiresAt: session.expiresAt, scopes: session.scopes }, session, store: to };
}
