import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import type { ClientCredentials } from '../oauth/client.js';
import { fetchUserInfo, UserInfoUnauthorizedError, type UserInfo } from '../oauth/tokens.js';
import { getAccessToken, type TokenSource } from '../session/access.js';
import { getDiscovery } from '../session/discovery-cache.js';
import { loadProfile, resolveBaseUrl } from '../session/profile.js';
import { describeUser, printJson, rows } from './format.js';

export async function run(ctx: Context): Promise<void> {
  let source = await getAccessToken(ctx);
  const profile = source.kind === 'session' ? source.profile : await loadProfile(ctx);
  const baseUrl = source.kind === 'session' ? source.profile.baseUrl! : resolveBaseUrl(ctx, profile);
  if (!baseUrl) throw new UsageError('PLAT_TOKEN is set but no platform is known: pass --base-url or set PLAT_BASE_URL.');
  const discovery = await getDiscovery(ctx, baseUrl);
  const deps = { fetch: (await ctx.http()).fetch };
  const credentials = (s: TokenSource): ClientCredentials => ({
    registration: (s.kind === 'session' ? s.profile.client : undefined) ?? {
      clientId: 'plat',
      authMethod: 'none',
      issuer: discovery.issuer,
      redirectUris: [],
      dynamic: false,
      registeredAt: 0,
    },
  });
  let info: UserInfo;
  try {
    info = await fetchUserInfo(deps, discovery.as, credentials(source), source.token);
  } catch (error) {
    // One refresh and one retry: the server may have revoked or expired the token early.
    if (!(error instanceof UserInfoUnauthorizedError) || source.kind !== 'session') throw error;
    source = await getAccessToken(ctx, { force: true });
    info = await fetchUserInfo(deps, discovery.as, credentials(source), source.token);
  }
  if (ctx.globals.json) {
    printJson(ctx.io, info);
    return;
  }
  const scopes = source.kind === 'session' ? source.session.scopes.join(' ') : '(from PLAT_TOKEN)';
  const entries: Array<[string, string]> = [
    ['User', describeUser({ sub: info.sub, name: info.name, email: info.email, preferredUsername: info.preferred_username })],
    ['Subject', info.sub],
    ['Platform', baseUrl],
    ['Profile', ctx.globals.profile],
    ['Scopes', scopes],
  ];
  ctx.io.out(rows(ctx.io, entries));
}
