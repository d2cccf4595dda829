/**
 * A profile named on the command line (or by PLAT_PROFILE, or by plat switch) that does not exist is a typo far
 * more often than a wish for a new, empty profile: every command but `plat login` (which creates profiles) stops
 * with exit 2 and the closest existing name, instead of acting on nothing and succeeding.
 */
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { didYouMean } from '../../terminal/text.js';
import { suggestCommand } from '../suggest.js';

/** Throws the usage error for a profile that has no file. `default` always exists as far as this check goes. */
export async function assertProfileExists(ctx: Context, name: string = ctx.globals.profile): Promise<void> {
  if (name === 'default') return;
  const profiles = await ctx.profiles();
  const scan = await profiles.scan();
  const names = [...scan.profiles.map((p) => p.name), ...scan.broken.map((b) => b.name)];
  if (names.includes(name)) return;
  throw unknownProfile(ctx, name, names);
}

export function unknownProfile(ctx: Context, name: string, existing: string[]): UsageError {
  // Only the profile this run acts on can have come from plat switch: a name typed as an argument (plat switch
  // pear, plat status pear) is the person's own.
  const origin =
    ctx.globals.profileSource === 'switch' && name === ctx.globals.profile ? ' (the current one, chosen with plat switch)' : '';
  const hint = didYouMean(name, existing, 1) || (existing.length > 0 ? ` Profiles: ${existing.join(', ')}.` : ' There are no profiles yet.');
  const other = origin ? ', or choose another: plat switch <profile>' : '';
  return new UsageError(
    `There is no profile ${name}${origin}.${hint} To create it, sign in: ${suggestCommand(ctx, ['login'], { profile: name })}${other}`,
  );
}
