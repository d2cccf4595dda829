import type { Context } from '../context.js';
import { PlatError } from '../errors.js';
import { loadSession, type Profile, type StoredSession } from '../session/access.js';
import { whoAmI } from '../session/userinfo.js';
import { describeUser, expiryText, iso, printJson, rows } from './format.js';

export interface StatusFlags {
  check?: boolean;
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
  works?: boolean;
  problem?: string;
}

export async function run(ctx: Context, flags: StatusFlags): Promise<void> {
  const profiles = await ctx.profiles();
  const scan = await profiles.scan();
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
    printJson(ctx.io, { profiles: statuses, token: ctx.env.PLAT_TOKEN ? 'PLAT_TOKEN is set and used instead of stored sessions' : null });
    return;
  }
  if (ctx.env.PLAT_TOKEN) ctx.io.note('PLAT_TOKEN is set: commands use it instead of the stored sessions below.');
  if (statuses.length === 0) {
    ctx.io.out('No profiles yet. Run: plat login --base-url <url>\n');
    return;
  }
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
        }
        entries.push(['Client ID', s.clientId ?? '-']);
        if (s.works !== undefined) entries.push(['Check', s.works ? 'the token works' : `failed: ${s.problem}`]);
        else if (s.problem) entries.push(['Problem', s.problem]);
        return `${title}\n${rows(ctx.io, entries)}`;
      })
      .join('\n'),
  );
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
  let session: StoredSession | undefined;
  try {
    const active = await loadSession(ctx, profile);
    if (active) {
      session = active.session;
      status.loggedIn = true;
      status.scopes = session.scopes;
      status.expiresAt = iso(session.expiresAt);
      status.tokenStore = active.store.kind;
      status.tokenStoreLocation = active.store.location;
    }
  } catch (error) {
    status.problem = (error as Error).message;
  }
  if (flags.check && status.loggedIn) {
    try {
      if (ctx.env.PLAT_TOKEN) throw new PlatError('PLAT_TOKEN is set, so the stored session was not checked');
      const who = await whoAmI(ctx, { profile, quiet: true });
      if (who.from === 'id_token') {
        // A token UserInfo cannot judge (bound to an API with --resource, or no UserInfo at all) says nothing either way.
        status.problem = `not checked: ${who.why}; plat call shows whether it works`;
        return status;
      }
      status.works = true;
    } catch (error) {
      status.works = false;
      status.problem = error instanceof PlatError ? error.message : String(error);
    }
  }
  return status;
}
