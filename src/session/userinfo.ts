/**
 * Who the session belongs to, for `plat whoami` and `plat status --check`: OIDC UserInfo at the endpoint of the
 * issuer that issued the session (never anywhere else), with one refresh and one retry when the token is refused.
 * Where UserInfo cannot answer — the server offers none, the token is bound to an API (RFC 8707), or the session
 * has no openid because the server is a plain OAuth 2.x server — what the ID token said at sign-in is the answer;
 * without one, the answer is that the server does not say (not a failure: the session itself works).
 */
import type { Context } from '../context.js';
import { AuthError, PlatError, UsageError } from '../errors.js';
import { fetchUserInfo, toProfileUser, UserInfoMissingError, UserInfoRefusedError, UserInfoUnauthorizedError, type UserInfo } from '../oauth/userinfo.js';
import type { Profile, ProfileUser } from '../store/types.js';
import type { DpopKey } from '../oauth/dpop.js';
import { freshToken } from './tokens/refresh.js';
import { bindSession, getAccessToken, type TokenSource } from './profile/binding.js';
import { noSessionError } from './no-session.js';
import { getDiscovery } from './discovery/discovery-cache.js';
import { sessionDiscovery } from './discovery/session-issuer.js';
import { suggestCommand } from './suggest.js';
import { offerStepUp, scopesToAsk } from './login/step-up.js';

export interface WhoAmI {
  /** The claims as the server sent them (UserInfo), those plat kept from the ID token, or none. */
  claims: UserInfo | Record<string, never>;
  /** Undefined only with `from: 'none'`. */
  user?: ProfileUser;
  /** `none`: the server does not tell who the session belongs to (no UserInfo for it, no ID token at sign-in). */
  from: 'userinfo' | 'id_token' | 'none';
  /** With `from: 'id_token'` or `'none'`: why UserInfo did not answer. */
  why?: string;
  baseUrl: string;
  profile: Profile;
  source: TokenSource;
}

/** `profile`: another profile than the invocation's (status --check); `quiet`: no note when the ID token answers. */
/** `asker`: who wants to know, as a step-up question names it ("whoami needs …"); by default what is asked. */
export async function whoAmI(ctx: Context, options: { profile?: Profile; quiet?: boolean; asker?: string } = {}): Promise<WhoAmI> {
  const binding = await bindSession(ctx, options.profile);
  if (binding.kind === 'none') throw noSessionError(ctx, binding);
  const baseUrl = binding.baseUrl;
  if (!baseUrl) throw new UsageError('PLAT_TOKEN is set but no platform is known: pass --base-url or set PLAT_BASE_URL.');
  let source = await getAccessToken(ctx, { binding });
  const profile = source.profile;
  // A session's token goes to its own issuer's UserInfo only; PLAT_TOKEN's issuer is not plat's to know.
  const discovery = source.kind === 'session' ? await sessionDiscovery(ctx, profile, baseUrl) : await getDiscovery(ctx, baseUrl);
  const known = source.kind === 'session' ? profile.user : undefined;
  const fromIdToken = (why: string, quietly = false): WhoAmI => {
    if (!known) throw new PlatError(`${why}, and plat kept no ID token claims for this session, so it cannot say who you are.`);
    if (!options.quiet && (!quietly || ctx.globals.verbose)) ctx.io.note(`${why}: this is who signed in, from the ID token.`);
    return { claims: idTokenClaims(known), user: known, from: 'id_token', why, baseUrl, profile, source };
  };
  // A session without openid is a plain OAuth 2.x session: the server owes it no identity, so not knowing is the
  // answer (exit 0), said plainly, rather than a failure.
  const withoutOpenId = source.kind === 'session' && !source.session.scopes.includes('openid');
  const notTold = (why: string): WhoAmI => {
    if (!options.quiet) ctx.io.note(`${why}, and the server issued no ID token: it does not tell plat who you are. The session itself works (plat call uses it).`);
    return { claims: {}, from: 'none', why, baseUrl, profile, source };
  };
  const withoutUserInfo = (why: string, quietly = false): WhoAmI => {
    if (known || !withoutOpenId) return quietly ? { ...fromIdToken(why, true) } : fromIdToken(why);
    return notTold(why);
  };
  // Tokens bound to an API the user named (--resource) are for it: UserInfo is not asked. A binding plat chose
  // itself is the normal case: UserInfo is asked (some servers take such tokens), and its refusal is no news.
  const bound = source.kind === 'session' && profile.resource ? profile.resource : undefined;
  if (bound && !profile.resourceByDefault) return withoutUserInfo(`The session's tokens are bound to ${bound}, which UserInfo does not accept`);
  if (typeof discovery.as.userinfo_endpoint !== 'string') {
    if (known || withoutOpenId) return withoutUserInfo(`The authorization server ${discovery.issuer} offers no UserInfo endpoint`);
    // A session that holds openid as far as plat was told (a server that echoes no scope, like OpenAuth) but got
    // no ID token, from a server with no UserInfo: nothing could say who it is, so that is the answer, not a failure.
    if (source.kind === 'session') return notTold(`The authorization server ${discovery.issuer} offers no UserInfo endpoint`);
    throw new PlatError(`The authorization server ${discovery.issuer} offers no UserInfo endpoint, so plat cannot ask who the token belongs to.`);
  }
  const http = await ctx.http();
  // The user who signed in, when plat knows it: UserInfo must name the same one (OIDC Core §5.3.2).
  const expected = known?.sub;
  let info: UserInfo;
  try {
    info = await fetchUserInfo(http, discovery.as, source.token, expected, dpopKeyOf(source));
  } catch (error) {
    // Step-up that asks, as the ApiClient's (request.ts) but for the issuer's UserInfo, which the ApiClient does not
    // send a token to: UserInfo names a scope the session lacks, and a person at a terminal may add it. Only for the
    // invocation's own profile: a sign-in adds scopes to that one, never to another that plat status --check asks about.
    const missing = error instanceof UserInfoRefusedError && source.kind === 'session' && !options.profile ? scopesToAsk(ctx, error.challenge, source.session.scopes) : undefined;
    const signedIn = missing && (await offerStepUp(ctx, profile, missing, options.asker ?? 'Reading who you are (UserInfo)'));
    if (signedIn) {
      source = await getAccessToken(ctx, { binding: await bindSession(ctx, signedIn) });
      const again = await fetchUserInfo(http, discovery.as, source.token, expected, dpopKeyOf(source));
      return { claims: again, user: toProfileUser(again), from: 'userinfo', baseUrl, profile: source.profile, source };
    }
    if (bound && (error instanceof UserInfoRefusedError || error instanceof UserInfoUnauthorizedError)) {
      return withoutUserInfo(`The session's tokens are bound to ${bound}, which UserInfo does not accept`, true);
    }
    if (error instanceof UserInfoMissingError && (known || withoutOpenId)) {
      const guessed = discovery.filledFromSpec.includes('userinfo_endpoint');
      return withoutUserInfo(
        guessed
          ? `The authorization server ${discovery.issuer} lists no UserInfo endpoint and has none at the platform's documented path`
          : `The authorization server's UserInfo endpoint answered HTTP ${error.status}`,
      );
    }
    if (error instanceof UserInfoRefusedError && (known || withoutOpenId)) return withoutUserInfo('The UserInfo endpoint does not accept this session\'s token');
    if (!(error instanceof UserInfoUnauthorizedError)) throw error;
    if (withoutOpenId) return withoutUserInfo('The UserInfo endpoint does not accept this session\'s token (the session has no openid scope)');
    // PLAT_TOKEN is to blame, not a session: logging in would change nothing while it is set.
    if (source.kind !== 'session') {
      throw new AuthError('The server rejected PLAT_TOKEN (HTTP 401 from its UserInfo endpoint). Provide a valid token, or unset PLAT_TOKEN to use the stored session.', { cause: error });
    }
    // One refresh and one retry: the server may have revoked or expired the token early.
    source = await freshToken(ctx, source, true);
    try {
      info = await fetchUserInfo(http, discovery.as, source.token, expected, dpopKeyOf(source));
    } catch (again) {
      if (!(again instanceof UserInfoUnauthorizedError)) throw again;
      throw new AuthError(`The server rejected the token even after a refresh. Run: ${suggestCommand(ctx, ['login'], { profile: profile.name, device: profile.loginMethod === 'device' })}`, { cause: again });
    }
  }
  return { claims: info, user: toProfileUser(info), from: 'userinfo', baseUrl, profile, source };
}

function idTokenClaims(user: ProfileUser): UserInfo {
  const claims: UserInfo = { sub: user.sub };
  if (user.name) claims.name = user.name;
  if (user.email) claims.email = user.email;
  if (user.preferredUsername) claims.preferred_username = user.preferredUsername;
  return claims;
}

/** The key of a bound session's token, for UserInfo's proof; undefined for Bearer (and PLAT_TOKEN). */
function dpopKeyOf(source: TokenSource): DpopKey | undefined {
  return source.kind === 'session' ? (source.session.dpopKey as DpopKey | undefined) : undefined;
}
