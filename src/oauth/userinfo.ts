/**
 * OIDC UserInfo (OpenID Connect Core §5.3): a bearer GET whose JSON answer names the user. Done over plat's
 * streaming request rather than oauth4webapi's Fetch-based pair, because `plat whoami` is called from scripts and
 * the Fetch globals alone cost ~20 ms of start-up; the checks are the ones §5.3.2–5.3.4 ask for: status, a JSON
 * content type, a JSON object with a string `sub`, and that `sub` is the signed-in user.
 */
import type { AuthorizationServer } from 'oauth4webapi';
import { AuthError, PlatError } from '../errors.js';
import type { Http } from '../http/index.js';
import type { HttpResponse } from '../http/types.js';
import { assertSecureEndpoint, MAX_OAUTH_BODY_BYTES } from './endpoints.js';
import { sanitize } from '../terminal/text.js';
import type { UserIdentity } from './types.js';
import type { DpopKey } from './dpop.js';
import { parseBearerChallenge } from './www-authenticate.js';
import { bodyReadError } from '../http/body-error.js';
import { readWholeBody } from '../http/read-body.js';

/** The whole UserInfo exchange, body included: a server that trickles cannot hold whoami forever. */
const USERINFO_DEADLINE_MS = 30_000;

export interface UserInfo {
  sub: string;
  name?: string;
  email?: string;
  preferred_username?: string;
  [claim: string]: unknown;
}

export async function fetchUserInfo(
  http: Pick<Http, 'request'>,
  as: AuthorizationServer,
  accessToken: string,
  expectedSubject?: string,
  /** The key of a DPoP-bound token (RFC 9449 §7): each request carries a fresh proof, and a nonce asked for is sent once. */
  dpopKey?: DpopKey,
): Promise<UserInfo> {
  const url = assertSecureEndpoint(as, 'userinfo_endpoint');
  const dpop = dpopKey ? await import('./dpop.js') : undefined;
  const send = () =>
    http.request({
      method: 'GET',
      url,
      headers: { ...(dpop ? dpop.dpopHeaders(dpopKey!, accessToken, 'GET', url, Date.now()) : { authorization: `Bearer ${accessToken}` }), accept: 'application/json' },
      timeoutMs: USERINFO_DEADLINE_MS,
    });
  let response = await send();
  if (dpop?.asksForDpopNonce(response.status, response.headers, url.origin)) {
    await readBounded(response, url).catch(() => '');
    response = await send();
    dpop.asksForDpopNonce(response.status, response.headers, url.origin);
  }
  const header = (name: string) => {
    const v = response.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  if (response.status === 401 || response.status === 403) {
    // Read to its end (it is small and bounded), so the connection goes back to the pool whole: one destroyed
    // mid-body at exit would build process.stderr (~3 ms) for a whoami that answers from the ID token.
    await readBounded(response, url).catch(() => '');
    const challenge = parseBearerChallenge(header('www-authenticate'));
    // A valid token that is not meant for UserInfo (bound to an API with --resource, or without openid) is refused
    // with 403 insufficient_scope, or by some servers with a 401 that names the audience: refreshing would not help.
    if (response.status === 403 || /audience/i.test(challenge?.errorDescription ?? '')) throw new UserInfoRefusedError(challenge);
    throw new UserInfoUnauthorizedError();
  }
  const text = await readBounded(response, url);
  // Nothing there: a guessed (documented) path on a server that has no UserInfo, or a listed one that is gone.
  if (response.status === 404 || response.status === 405 || response.status === 501) throw new UserInfoMissingError(url, response.status);
  if (response.status !== 200) {
    throw new PlatError(
      `While reading your user information, ${url.origin} answered with HTTP ${response.status}${oauthError(text)}. Try again later.`,
    );
  }
  const type = (header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/jwt') {
    throw new PlatError('The server answers UserInfo with a signed JWT, which plat does not support (it asks for JSON).');
  }
  if (type !== 'application/json') {
    throw new PlatError(`While reading your user information, ${url.origin} did not answer with JSON (it sent ${sanitize(type, 60) || 'no content type'}).`);
  }
  let claims: unknown;
  try {
    claims = JSON.parse(text);
  } catch {
    throw new PlatError(`While reading your user information, ${url.origin} sent JSON that cannot be parsed.`);
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims) || typeof (claims as UserInfo).sub !== 'string' || !(claims as UserInfo).sub) {
    throw new PlatError(`While reading your user information, ${url.origin} sent an answer without a subject ("sub").`);
  }
  const info = claims as UserInfo;
  if (expectedSubject !== undefined && info.sub !== expectedSubject) {
    throw new PlatError('The server\'s UserInfo names a different user than the one who signed in (sub mismatch); plat will not trust it.');
  }
  return info;
}

/** The non-secret facts about the user that the profile keeps. */
export function toProfileUser(info: Pick<UserInfo, 'sub'> & Record<string, unknown>): UserIdentity {
  // Stored and printed later: made safe to print once, here (a hostile name could carry escape sequences).
  const text = (v: unknown) => (typeof v === 'string' && sanitize(v) ? sanitize(v) : undefined);
  return { sub: sanitize(info.sub), name: text(info.name), email: text(info.email), preferredUsername: text(info.preferred_username) };
}

function readBounded(response: HttpResponse, url: URL): Promise<string> {
  const tooLarge = () => new PlatError(`The server at ${url.origin} sent more than ${MAX_OAUTH_BODY_BYTES} bytes of user information.`);
  return readWholeBody(response.body, MAX_OAUTH_BODY_BYTES, tooLarge).then(
    (bytes) => bytes.toString('utf8'),
    (error: unknown) => {
      throw bodyReadError(error, url);
    },
  );
}

function oauthError(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof body.error === 'string') {
      return ` (${sanitize(body.error, 80)}${typeof body.error_description === 'string' ? `: ${sanitize(body.error_description)}` : ''})`;
    }
  } catch {
    // not an OAuth error body
  }
  return '';
}

/** UserInfo refused a token that is valid but not meant for it. */
export class UserInfoRefusedError extends PlatError {
  constructor(readonly challenge?: { error?: string; errorDescription?: string; scope?: string }) {
    const why = challenge?.error ? ` (${sanitize(challenge.error, 80)}${challenge.errorDescription ? `: ${sanitize(challenge.errorDescription)}` : ''})` : '';
    super(
      `The server's UserInfo endpoint does not accept this session's access token${why}: the server did not grant it ` +
        'what UserInfo needs (the openid scope, for an audience UserInfo serves). plat status shows the scopes the session was granted.',
    );
    this.name = 'UserInfoRefusedError';
  }
}

export class UserInfoUnauthorizedError extends AuthError {
  constructor() {
    super('The server rejected the access token. Run plat login to sign in again.');
    this.name = 'UserInfoUnauthorizedError';
  }
}

/** The UserInfo address answered as if there were no such endpoint (404, 405, 501). */
export class UserInfoMissingError extends PlatError {
  constructor(
    readonly url: URL,
    readonly status: number,
  ) {
    super(`The server has no UserInfo endpoint at ${url.origin}${url.pathname} (HTTP ${status}).`);
    this.name = 'UserInfoMissingError';
  }
}
