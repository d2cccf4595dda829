import type { Context } from '../../context.js';
import { AuthError, PlatError } from '../../errors.js';
import { describeSession, noSuchProfile, suggest, validProfileName, type StoredSessionView } from '../../session/index.js';
import type { Profile } from '../../store/types.js';
import { describeUser, expiryText, iso, printJson, relative, rows, userJson } from '../shared/format.js';

/** What the profile store's scan returns: the usable profiles and the damaged ones. */
interface ProfileScan {
  profiles: Profile[];
  broken: Array<{ name: string; file: string; error: PlatError }>;
}

export interface StatusFlags {
  check?: boolean;
  /** `plat status <profile>`: only this one (exit 2 with the closest name when there is no such profile). */
  profile?: string;
}

interface ProfileStatus {
  profile: string;
  current: boolean;
  loggedIn: boolean;
  baseUrl: string | null;
  issuer: string | null;
  user: Profile['user'] | null;
  scopes: string[];
  expiresAt: string | null;
  clientId: string | null;
  tokenStore: string | null;
  tokenStoreLocation: string | null;
  /** `DPoP`: the session's tokens are bound to a key plat keeps (RFC 9449); `Bearer`: they are not; null: no session. */
  tokenType?: 'DPoP' | 'Bearer' | null;
  /** With DPoP: the key's thumbprint (RFC 7638), the tokens' cnf.jkt. */
  dpopJkt?: string;
  works?: boolean;
  /** --check: when the server accepted the token, and whether plat refreshed it first to check it. */
  checkedAt?: string;
  refreshedForCheck?: boolean;
  problem?: string;
}

export async function run(ctx: Context, flags: StatusFlags): Promise<void> {
  const profiles = await ctx.profiles();
  const all = await profiles.scan();
  const named = namedProfile(ctx);
  if (named && named !== 'default') await selectProfiles(ctx, all, named); // exit 2 for a typo; the listing stays whole
  const scan = await selectProfiles(ctx, all, flags.profile);
  const statuses: ProfileStatus[] = [];
  for (const profile of scan.profiles) statuses.push(await statusOf(ctx, profile, flags));
  for (const broken of scan.broken) {
    statuses.push({
      profile: broken.name,
      current: broken.name === ctx.globals.profile,
      loggedIn: false,
      baseUrl: null,
      issuer: null,
      user: null,
      scopes: [],
      expiresAt: null,
      clientId: null,
      tokenStore: null,
      tokenStoreLocation: null,
      problem: broken.error.message,
    });
  }
  if (ctx.globals.json) {
    printJson(ctx.io, { profiles: statuses.map((s) => ({ ...s, user: userJson(s.user ?? undefined) })), token: ctx.env.PLAT_TOKEN ? 'PLAT_TOKEN is set and used instead of stored sessions' : null });
    throwIfNotLoggedIn(ctx, statuses, flags.profile);
    return;
  }
  if (ctx.env.PLAT_TOKEN) ctx.io.note('PLAT_TOKEN is set: commands use it instead of the stored sessions below.');
  // No profiles: the error says so (one message per fact), and stdout stays empty.
  if (statuses.length === 0) throwIfNotLoggedIn(ctx, statuses, flags.profile);
  const now = ctx.now();
  ctx.io.out(
    statuses
      .map((s) => {
        const title = `${ctx.io.bold(s.profile)}${s.current ? ' (current)' : ''}`;
        if (s.problem && !s.loggedIn && !s.baseUrl) return `${title}\n${rows(ctx.io, [['Problem', s.problem]])}`;
        const entries: Array<[string, string]> = [
          ['Platform', s.baseUrl ?? '-'],
          ['Issuer', s.issuer ?? '-'],
          ['Logged in', s.loggedIn ? `yes, as ${describeUser(s.user ?? undefined)}` : 'no'],
        ];
        if (s.loggedIn) {
          entries.push(['Scopes', s.scopes.join(' ') || '-']);
          entries.push(['Token', expiryText(s.expiresAt ? Date.parse(s.expiresAt) : undefined, now)]);
          entries.push(['Stored in', s.tokenStore === 'keychain' ? 'OS keychain' : (s.tokenStoreLocation ?? '-')]);
          if (s.tokenType) entries.push(['Token type', s.tokenType === 'DPoP' ? `DPoP: bound to a key plat keeps (thumbprint ${s.dpopJkt ?? '-'})` : 'Bearer']);
        }
        entries.push(['Client ID', s.clientId ?? '-']);
        if (s.works !== undefined) entries.push(['Check', s.works ? checkedText(s, now) : `failed: ${s.problem}`]);
        else if (s.problem) entries.push(['Problem', s.problem]);
        return `${title}\n${rows(ctx.io, entries)}`;
      })
      .join('\n'),
  );
  throwIfNotLoggedIn(ctx, statuses, flags.profile);
}

/** What --check asked and when, so a token refreshed for the check does not sit beside an expiry in the past. */
function checkedText(s: ProfileStatus, now: number): string {
  const refreshed = s.refreshedForCheck ? ', after refreshing it (the stored one was about to expire or had expired)' : '';
  return `the token works: the server's UserInfo endpoint accepted it ${relative(Date.parse(s.checkedAt!), now)} (${s.checkedAt})${refreshed}`;
}

/**
 * A profile named by --profile or PLAT_PROFILE is checked like the argument (a typo is exit 2), but the listing
 * stays whole: that profile is the one marked current. One chosen with plat switch is not checked here, so that
 * plat status still shows what there is when that profile was deleted by hand.
 */
function namedProfile(ctx: Context): string | undefined {
  return ctx.globals.profileSource === 'option' || ctx.globals.profileSource === 'env' ? ctx.globals.profile : undefined;
}

/** `plat status <profile>`: just that one, or exit 2 naming the closest profile. */
async function selectProfiles(ctx: Context, scan: ProfileScan, name: string | undefined): Promise<ProfileScan> {
  if (name === undefined) return scan;
  validProfileName(name);
  const profiles = scan.profiles.filter((p) => p.name === name);
  const broken = scan.broken.filter((b) => b.name === name);
  if (profiles.length + broken.length === 0) {
    throw noSuchProfile(ctx, name, [...scan.profiles.map((p) => p.name), ...scan.broken.map((b) => b.name)]);
  }
  return { profiles, broken };
}

/**
 * Like `gh auth status`: the listing is printed in full, then exit 4 when the profile asked about (or, with none
 * named, the current one) is not logged in or, with --check, its token was refused, so `plat status && …` is a check
 * a script can use. Other profiles' states are shown, not turned into the exit code: one logged-out profile must
 * not make every later `plat status` fail. No profile at all is not logged in either.
 */
function throwIfNotLoggedIn(ctx: Context, all: ProfileStatus[], named: string | undefined): void {
  if (all.length === 0) throw new AuthError(`No profiles yet. Run: ${suggest(ctx, ['login'], { profile: 'default' })} --base-url <url>`);
  const asked = named ?? ctx.globals.profile;
  const statuses = all.filter((s) => s.profile === asked);
  if (statuses.length === 0) {
    throw new AuthError(
      `The current profile ${asked} does not exist, so it is not logged in. Choose one of those listed with plat switch <profile>, or sign in: ${suggest(ctx, ['login'], { profile: asked })} --base-url <url>`,
    );
  }
  // A profile plat cannot read now (damaged file, locked keychain) is not "not logged in": its problem is said.
  const unusable = statuses.filter((s) => !s.loggedIn && s.problem);
  const out = statuses.filter((s) => !s.loggedIn && !s.problem);
  const refused = statuses.filter((s) => s.loggedIn && s.works === false);
  if (out.length === 0 && refused.length === 0 && unusable.length === 0) return;
  const parts: string[] = unusable.map((s) => `Profile ${s.profile} cannot be used now: ${s.problem}`);
  if (out.length > 0) {
    const first = out[0]!.profile;
    parts.push(`Profile ${first} is not logged in. Run: ${suggest(ctx, ['login'], { profile: first })}`);
  }
  if (refused.length > 0) {
    const first = refused[0]!.profile;
    parts.push(`The server refused the token of profile ${first}. Run: ${suggest(ctx, ['login'], { profile: first })}`);
  }
  throw new AuthError(parts.join(' '));
}

async function statusOf(ctx: Context, profile: Profile, flags: StatusFlags): Promise<ProfileStatus> {
  const status: ProfileStatus = {
    profile: profile.name,
    current: profile.name === ctx.globals.profile,
    loggedIn: false,
    baseUrl: profile.baseUrl ?? null,
    issuer: profile.issuer ?? null,
    user: profile.user ?? null,
    scopes: profile.scopes ?? [],
    expiresAt: iso(profile.expiresAt),
    clientId: profile.client?.clientId ?? null,
    tokenStore: profile.loggedIn ? (profile.tokenStore ?? null) : null,
    tokenStoreLocation: null,
  };
  let stored: StoredSessionView | undefined;
  try {
    stored = await describeSession(ctx, profile);
    if (stored) {
      status.loggedIn = true;
      status.scopes = stored.scopes;
      status.expiresAt = iso(stored.expiresAt);
      status.tokenStore = stored.tokenStore;
      status.tokenStoreLocation = stored.tokenStoreLocation;
      status.tokenType = stored.tokenType;
      if (stored.dpopJkt) status.dpopJkt = stored.dpopJkt;
    }
  } catch (error) {
    status.problem = (error as Error).message;
  }
  if (flags.check && stored) {
    try {
      // PLAT_TOKEN set: check() refuses, as every verb that would use the stored session's token does.
      const { who, refreshed } = await stored.check();
      // The check may have refreshed the token first: show the expiry of the one it checked.
      if (who.source.kind === 'session') {
        status.expiresAt = iso(who.source.session.expiresAt);
        if (refreshed) status.refreshedForCheck = true;
      }
      if (who.from !== 'userinfo') {
        // A token UserInfo cannot judge (bound to an API with --resource, or no UserInfo at all) says nothing either way.
        status.problem = `not checked: ${who.why}; plat call shows whether it works`;
        return status;
      }
      status.works = true;
      status.checkedAt = iso(ctx.now())!;
    } catch (error) {
      status.works = false;
      status.problem = error instanceof PlatError ? error.message : String(error);
    }
  }
  return status;
}
