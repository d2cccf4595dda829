/**
 * `plat switch <profile>`: the profile later commands use when neither --profile nor PLAT_PROFILE names one, kept
 * in the config dir (like `gh auth switch` or `kubectl config use-context`).
 */
import type { Context } from '../../context.js';
import { switchTo } from '../../session/index.js';
import { describeUser, printJson } from '../shared/format.js';

export async function run(ctx: Context, name: string): Promise<void> {
  const { profile, previous } = await switchTo(ctx, name);
  if (ctx.env.PLAT_PROFILE && ctx.env.PLAT_PROFILE !== name) {
    ctx.io.warn(`PLAT_PROFILE=${ctx.env.PLAT_PROFILE} is set in this environment and still wins over plat switch; unset it to use ${name}.`);
  }
  if (ctx.globals.json) {
    printJson(ctx.io, { profile: name, previous, baseUrl: profile?.baseUrl ?? null, loggedIn: Boolean(profile?.loggedIn) });
    return;
  }
  const where = profile?.baseUrl ? ` (${profile.baseUrl}${profile.loggedIn ? `, ${describeUser(profile.user)}` : ', not logged in'})` : '';
  ctx.io.out(`Switched to profile ${name}${where}.\n`);
}
