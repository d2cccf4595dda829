import type { Context } from '../../context.js';
import { forget, requireProfile, signOut, type LogoutResult } from '../../session/index.js';
import { printJson } from '../shared/format.js';

export interface LogoutFlags {
  revoke: boolean;
  all?: boolean;
  forget?: boolean;
}

export async function run(ctx: Context, flags: LogoutFlags): Promise<void> {
  // A mistyped --profile must not "succeed" at logging out of nothing (exit 2 with the closest name).
  if (!flags.all) await requireProfile(ctx);
  const names = flags.all ? (await (await ctx.profiles()).list()).map((p) => p.name) : [ctx.globals.profile];
  const results: Array<LogoutResult & { forgotten: boolean }> = [];
  for (const name of names) {
    const result = await signOut(ctx, name, { revoke: flags.revoke });
    if (flags.forget) await forget(ctx, name);
    results.push({ ...result, forgotten: Boolean(flags.forget) });
  }
  for (const r of results) {
    // One warning per profile, however many tokens the unreachable server failed to revoke.
    if (r.revocationErrors.length > 0) {
      ctx.io.warn(`Could not revoke the tokens of profile ${r.profile} at the server: ${r.revocationErrors.join(' ')} They were removed from this machine anyway.`);
    }
  }
  if (ctx.globals.json) {
    printJson(ctx.io, flags.all ? results : results[0]);
    return;
  }
  if (results.length === 0) ctx.io.out('No profiles to log out of.\n');
  for (const r of results) {
    const which = r.profile === 'default' && !flags.all ? '' : ` (profile ${r.profile})`;
    if (!r.wasLoggedIn && !r.forgotten) ctx.io.out(`Not logged in${which}; nothing to do.\n`);
    else if (r.wasLoggedIn) {
      const how = r.revoked
        ? '; the tokens were revoked at the server'
        : r.revocationUnsupported
          ? '; the server offers no revocation, so the tokens were only removed from this machine (they stay valid until they expire)'
          : flags.revoke
            ? ''
            : '; tokens not revoked (--no-revoke)';
      ctx.io.out(`Logged out${which}${how}.\n`);
    }
    if (r.forgotten) ctx.io.out(`Forgot profile ${r.profile}: its platform, registration and user are gone from this machine.\n`);
  }
}
