/**
 * Which profile a command acts on when the profile and the base URL were named in different places. An explicit
 * flag beats the environment (as in gh), and where the user named both a profile and a platform that disagree, plat
 * says so instead of guessing. A --base-url / PLAT_BASE_URL alone that names a platform another profile is signed
 * in to uses that profile, as `gh api --hostname` picks that host's token.
 */
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { Profile } from '../../store/types.js';

/**
 * `--profile b` with an exported PLAT_BASE_URL naming another platform than b's: exit 2. PLAT_BASE_URL alone would
 * send b's work to another platform (anonymously), which is never what `--profile b` meant.
 */
export function assertProfileAgreesWithEnv(ctx: Context, profile: Profile, named: string | undefined): void {
  if (ctx.globals.profileSource !== 'option' || ctx.globals.baseUrl || !named) return;
  if (!profile.baseUrl || profile.baseUrl === named) return;
  throw new UsageError(
    `--profile ${profile.name} is for ${profile.baseUrl}, but PLAT_BASE_URL names ${named}. ` +
      'Unset PLAT_BASE_URL to use the profile, or pass --base-url to say which platform you mean.',
  );
}

/**
 * The profile signed in to `named` when the profile in use is not and none was named (--profile, PLAT_PROFILE):
 * exactly one such profile is used, said on stderr; several are named, exit 2; none leaves `profile` as it is
 * (the call goes out anonymously, or the command says how to sign in there).
 */
export async function profileForPlatform(ctx: Context, profile: Profile, named: string | undefined): Promise<Profile> {
  if (!named || profile.baseUrl === named) return profile;
  if (ctx.globals.profileSource === 'option' || ctx.globals.profileSource === 'env') return profile;
  const holders = await signedInTo(ctx, named);
  if (holders.length === 0) return profile;
  if (holders.length > 1) {
    throw new UsageError(
      `Profiles ${holders.map((p) => p.name).join(', ')} are all signed in to ${named}: choose one with --profile (for example --profile ${holders[0]!.name}).`,
    );
  }
  const chosen = holders[0]!;
  ctx.io.note(`Using profile ${chosen.name}, signed in to ${named}.`);
  // From here on the invocation acts on that profile: hints it prints name it, and later loads find it.
  ctx.globals.profile = chosen.name;
  ctx.globals.profileSource = 'option';
  return chosen;
}

/** Profiles with a session (or one that ended without the user's word) at this base URL. */
export async function signedInTo(ctx: Context, baseUrl: string): Promise<Profile[]> {
  const profiles = await ctx.profiles();
  const { profiles: all } = await profiles.scan();
  return all.filter((p) => p.baseUrl === baseUrl && (p.loggedIn || p.sessionEnded));
}

/**
 * A name for a new profile at `baseUrl` that no profile has yet, so a suggested `plat login --profile <it>` never
 * moves an existing profile (and revokes its session): the host's first label (school for school.example.com),
 * or host-port for an address.
 */
export async function freshProfileName(ctx: Context, baseUrl: string): Promise<string> {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const labels = host.split('.').filter((label) => label && !['www', 'api'].includes(label));
  const numeric = /^[\d.:]+$/.test(host) || host === 'localhost';
  let base = (numeric ? `${host === 'localhost' ? 'local' : 'host'}${url.port ? `-${url.port}` : ''}` : (labels[0] ?? 'platform'))
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 40);
  if (!/^[A-Za-z0-9_]/.test(base)) base = `p${base}`;
  const profiles = await ctx.profiles();
  const { profiles: all, broken } = await profiles.scan();
  const taken = new Set([...all.map((p) => p.name), ...broken.map((b) => b.name), 'default']);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}
