/**
 * Choosing the current profile (`plat switch`), kept in the config dir: what a command acts on when neither
 * --profile nor PLAT_PROFILE names a profile.
 */
import type { Context } from '../../context.js';
import type { Profile } from '../../store/types.js';
import { validateProfileName } from '../../store/paths.js';
import { assertProfileExists } from './profile-names.js';

export interface SwitchResult {
  profile: Profile | undefined;
  previous: string;
}

export async function switchProfile(ctx: Context, name: string): Promise<SwitchResult> {
  validateProfileName(name);
  await assertProfileExists(ctx, name);
  const previous = ctx.globals.currentProfile ?? 'default';
  const { clearCurrentProfile, writeCurrentProfile } = await import('../../store/current-profile.js');
  // `default` is what applies without a choice: switching to it removes the choice rather than recording it.
  if (name === 'default') await clearCurrentProfile(ctx.configDir);
  else await writeCurrentProfile(ctx.configDir, name);
  const profile = await (await ctx.profiles()).load(name).catch(() => undefined);
  return { profile, previous };
}
