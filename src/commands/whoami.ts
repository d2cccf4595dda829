import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { fetchUserInfo, UserInfoUnauthorizedError, type UserInfo } from '../oauth/userinfo.js';
import { getAccessToken } from '../session/access.js';
import { getDiscovery } from '../session/discovery-cache.js';
import { loadProfile, resolveBaseUrl } from '../session/profile.js';
import { describeUser, printJson, rows } from './format.js';
import { toProfileUser } from '../oauth/userinfo.js';

export async function run(ctx: Context): Promise<void> {
  let source = await getAccessToken(ctx);
  const profile = source.kind === 'session' ? source.profile : await loadProfile(ctx);
  const baseUrl = source.kind === 'session' ? source.profile.baseUrl! : resolveBaseUrl(ctx, profile);
  if (!baseUrl) throw new UsageError('PLAT_TOKEN is set but no platform is known: pass --base-url or set PLAT_BASE_URL.');
  const discovery = await getDiscovery(ctx, baseUrl);
  const http = await ctx.http();
  // The user who signed in, when plat knows it: UserInfo must name the same one (OIDC Core §5.3.4).
  const expected = source.kind === 'session' ? source.profile.user?.sub : undefined;
  let info: UserInfo;
  try {
    info = await fetchUserInfo(http, discovery.as, source.token, expected);
  } catch (error) {
    // One refresh and one retry: the server may have revoked or expired the token early.
    if (!(error instanceof UserInfoUnauthorizedError) || source.kind !== 'session') throw error;
    source = await getAccessToken(ctx, { force: true });
    info = await fetchUserInfo(http, discovery.as, source.token, expected);
  }
  if (ctx.globals.json) {
    printJson(ctx.io, info);
    return;
  }
  const scopes = source.kind === 'session' ? source.session.scopes.join(' ') : '(from PLAT_TOKEN)';
  const entries: Array<[string, string]> = [
    ['User', describeUser(toProfileUser(info))],
    ['Subject', info.sub],
    ['Platform', baseUrl],
    ['Profile', ctx.globals.profile],
    ['Scopes', scopes],
  ];
  ctx.io.out(rows(ctx.io, entries));
}
