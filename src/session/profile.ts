import type { Context } from '../context.js';
import { AuthError, UsageError } from '../errors.js';
import { parseBaseUrl } from '../oauth/base-url.js';
import type { Profile } from '../store/types.js';

/** The profile named by --profile / PLAT_PROFILE, as stored (or a fresh one that is not saved yet). */
export async function loadProfile(ctx: Context): Promise<Profile> {
  const profiles = await ctx.profiles();
  return (await profiles.load(ctx.globals.profile)) ?? { name: ctx.globals.profile };
}

/** --base-url, then PLAT_BASE_URL, then what the profile remembered at login. */
export function resolveBaseUrl(ctx: Context, profile: Profile | undefined): string | undefined {
  const explicit = ctx.globals.baseUrl ?? (ctx.env.PLAT_BASE_URL || undefined);
  if (explicit) return parseBaseUrl(explicit);
  return profile?.baseUrl;
}

export function requireBaseUrl(ctx: Context, profile: Profile | undefined): string {
  const baseUrl = resolveBaseUrl(ctx, profile);
  if (!baseUrl) {
    throw new UsageError('No platform to talk to: pass --base-url <https://…> (or set PLAT_BASE_URL) the first time.');
  }
  return baseUrl;
}

export function notLoggedIn(ctx: Context, profile: Profile | undefined): AuthError {
  const where = profile?.baseUrl ? '' : ' --base-url <url>';
  const which = ctx.globals.profile === 'default' ? '' : ` --profile ${ctx.globals.profile}`;
  return new AuthError(`Not logged in${which ? ` (profile ${ctx.globals.profile})` : ''}. Run: plat login${where}${which}`);
}
