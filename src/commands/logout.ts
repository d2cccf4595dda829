import type { Context } from '../context.js';
import { logoutProfile, type LogoutResult } from '../session/logout.js';
import { printJson } from './format.js';

export interface LogoutFlags {
  revoke: boolean;
  all?: boolean;
}

export async function run(ctx: Context, flags: LogoutFlags): Promise<void> {
  const names = flags.all ? (await (await ctx.profiles()).list()).map((p) => p.name) : [ctx.globals.profile];
  const results: LogoutResult[] = [];
  for (const name of names) results.push(await logoutProfile(ctx, name, { revoke: flags.revoke }));
  for (const r of results) {
    for (const message of r.revocationErrors) ctx.io.warn(`Could not revoke the tokens of profile ${r.profile} at the server: ${message} They were removed from this machine anyway.`);
  }
  if (ctx.globals.json) {
    printJson(ctx.io, flags.all ? results : results[0]);
    return;
  }
  if (results.length === 0) ctx.io.out('No profiles to log out of.\n');
  for (const r of results) {
    const which = r.profile === 'default' && !flags.all ? '' : ` (profile ${r.profile})`;
    if (!r.wasLoggedIn) ctx.io.out(`Not logged in${which}; nothing to do.\n`);
    else {
      const how = r.revoked
        ? '; the tokens were revoked at the server'
        : r.revocationUnsupported
          ? '; the server offers no revocation, so the tokens were only removed from this machine (they stay valid until they expire)'
          : flags.revoke
            ? ''
            : '; tokens not revoked (--no-revoke)';
      ctx.io.out(`Logged out${which}${how}.\n`);
    }
  }
}
