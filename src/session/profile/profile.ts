import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { parseBaseUrl } from './base-url.js';
import { DamagedDataError } from '../../store/atomic.js';
import type { Profile } from '../../store/types.js';

/**
 * The profile named by --profile / PLAT_PROFILE (or, with only a base URL named, the one signed in there: see
 * platform-profile.ts), as stored (or a fresh one that is not saved yet).
 * `replaceDamaged` (login): a damaged profile file is replaced by the new sign-in, as its error message promises,
 * instead of stopping it. `mayBeNew` (login, completion): a name with no profile yet is fine.
 */
export async function loadProfile(ctx: Context, options: { replaceDamaged?: boolean; mayBeNew?: boolean } = {}): Promise<Profile> {
  return (await resolveProfile(ctx, options)).profile;
}

/**
 * The profile this invocation acts on and the platform it names (--base-url, then PLAT_BASE_URL; undefined when
 * none), worked out together: binding.ts needs both, and reading them in one go parses the base URL once.
 */
export async function resolveProfile(
  ctx: Context,
  options: { replaceDamaged?: boolean; mayBeNew?: boolean } = {},
): Promise<{ profile: Profile; named: string | undefined }> {
  const profile = await loadNamedProfile(ctx, options);
  const named = explicitBaseUrl(ctx);
  if (!named) return { profile, named };
  // login and completion (mayBeNew) act on the profile named, whatever platform it belongs to: login says so itself.
  if (options.mayBeNew) return { profile, named };
  const { assertProfileAgreesWithEnv, profileForPlatform } = await import('./platform-profile.js');
  assertProfileAgreesWithEnv(ctx, profile, named);
  return { profile: await profileForPlatform(ctx, profile, named), named };
}

async function loadNamedProfile(ctx: Context, options: { replaceDamaged?: boolean; mayBeNew?: boolean }): Promise<Profile> {
  const profiles = await ctx.profiles();
  try {
    const found = await profiles.load(ctx.globals.profile);
    if (found) return found;
    // A profile that does not exist is a typo (exit 2, with the closest name) except where one is created.
    if (!options.mayBeNew && ctx.globals.profile !== 'default') {
      const { assertProfileExists } = await import('./profile-names.js');
      await assertProfileExists(ctx);
    }
    return { name: ctx.globals.profile };
  } catch (error) {
    if (!options.replaceDamaged || !(error instanceof DamagedDataError)) throw error;
    ctx.io.warn(`${profiles.pathOf(ctx.globals.profile)} is damaged; this sign-in replaces it (and registers plat anew if it must).`);
    return { name: ctx.globals.profile };
  }
}

/** The base URL named for this invocation (--base-url, then PLAT_BASE_URL), normalised; undefined when none. */
export function explicitBaseUrl(ctx: Context): string | undefined {
  const explicit = ctx.globals.baseUrl ?? (ctx.env.PLAT_BASE_URL || undefined);
  return explicit ? parseBaseUrl(explicit) : undefined;
}

/** --base-url, then PLAT_BASE_URL, then what the profile remembered at login. */
export function resolveBaseUrl(ctx: Context, profile: Profile | undefined): string | undefined {
  return explicitBaseUrl(ctx) ?? profile?.baseUrl;
}

export function requireBaseUrl(ctx: Context, profile: Profile | undefined): string {
  const baseUrl = resolveBaseUrl(ctx, profile);
  if (!baseUrl) throw noPlatformError();
  return baseUrl;
}

/** The usage error for an invocation that names no platform and has none from its profile. */
export function noPlatformError(): UsageError {
  return new UsageError('No platform to talk to: pass --base-url <https://…> (or set PLAT_BASE_URL) the first time.');
}
