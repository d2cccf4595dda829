/**
 * Token endpoint (code exchange, refresh), revocation (RFC 7009) and UserInfo, each a request/process pair from
 * oauth4webapi with the response checked before plat keeps anything.
 */
import * as oauth from 'oauth4webapi';
import { AuthError, InterruptedError, PlatError } from '../errors.js';
import { clientAuth, toOAuthClient, type ClientCredentials } from './client.js';
import { assertSecureEndpoint } from './endpoints.js';
import { oauthErrorOf, toPlatError } from './errors.js';
import { sanitize } from '../terminal/text.js';
import { requestOptions, type OAuthDeps } from './options.js';
import { withIdentityScopes } from './scopes.js';
import { bearerWhenUntyped, HELD_BY_SERVER } from './token-type.js';
import type { TokenSet } from './types.js';
import type { DpopKey } from './dpop.js';

function additional(resource?: string) {
  return resource ? { additionalParameters: { resource } } : {};
}

export async function exchangeCode(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  credentials: ClientCredentials,
  input: {
    callbackParams: URLSearchParams;
    redirectUri: string;
    codeVerifier: string;
    /** The nonce sent with the authorization request (whenever `openid` was asked for): the ID token must carry it. */
    nonce?: string;
    resource?: string;
    requestedScopes: string[];
    now: number;
    /** The key the tokens are to be bound to (RFC 9449), where the server offers DPoP and the person did not decline. */
    dpop?: DpopKey;
  },
): Promise<{ session: TokenSet; idTokenSubject?: string; idTokenClaims?: Record<string, unknown> }> {
  const endpoint = assertSecureEndpoint(as, 'token_endpoint');
  const client = toOAuthClient(credentials.registration);
  let issued = false;
  try {
    const answer = await withDpopNonce(input.dpop, (proof) =>
      oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth(credentials, as, 'token'),
        input.callbackParams,
        input.redirectUri,
        input.codeVerifier,
        { ...requestOptions(deps, endpoint), ...additional(input.resource), ...proof },
      ),
    );
    issued = answer.status === 200;
    const response = await bearerWhenUntyped(deps, answer);
    // An ID token that comes back is validated (issuer, audience, expiry, and the nonce plat sent); none is ever
    // required: a plain OAuth 2.x server that was asked for openid (or grants it) may issue none, and the access
    // token is still good. Which check applies is decided by whether the answer carries one.
    const idToken = await carriesIdToken(response);
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      response,
      idToken ? { expectedNonce: input.nonce ?? oauth.expectNoNonce, requireIdToken: true } : undefined,
    );
    const claims = result.id_token ? oauth.getValidatedIdTokenClaims(result) : undefined;
    return { session: toSession(result, input.now, input.requestedScopes, input.dpop), idTokenSubject: claims?.sub, idTokenClaims: claims };
  } catch (error) {
    const failure = codeExchangeFailure(error, endpoint);
    throw issued ? heldByServer(failure) : failure;
  }
}

function codeExchangeFailure(error: unknown, endpoint: URL): PlatError {
  const proof = dpopFailure(error);
  if (proof) return proof;
  const nonce = nonceFailure(error);
  if (nonce) return new AuthError(nonce, { cause: error });
  const body = oauthErrorOf(error);
  if (body?.error === 'invalid_grant') {
    return new AuthError('The server did not accept the sign-in code (invalid_grant). Run plat login again.', { cause: error });
  }
  if (body?.error === 'invalid_client') return new ClientRejectedError(body.description);
  return toPlatError(error, 'exchanging the sign-in code for tokens', endpoint.origin);
}

/** A refusal of tokens the server did issue (it answered 200): the sentence says what the server may still hold. */
export function heldByServer(failure: PlatError): PlatError {
  if (failure instanceof InterruptedError) return failure; // Ctrl-C stays Ctrl-C
  return new PlatError(`${failure.message} ${HELD_BY_SERVER}`, failure.exitCode, { cause: failure });
}

/** Whether a token response's JSON body has an id_token member (any value: a malformed one is then refused). */
async function carriesIdToken(response: Response): Promise<boolean> {
  if (!response.ok) return false;
  try {
    const body: unknown = await response.clone().json();
    return typeof body === 'object' && body !== null && 'id_token' in body && (body as { id_token?: unknown }).id_token !== undefined;
  } catch {
    return false; // the protocol library reports the unreadable body in its own words
  }
}

/** OIDC Core §3.1.3.7: an ID token without this login's nonce was not issued for it. One sentence per case. */
function nonceFailure(error: unknown): string | undefined {
  if (!(error instanceof oauth.OperationProcessingError)) return undefined;
  const claim = (error.cause as { claim?: unknown } | undefined)?.claim;
  if (error.code === oauth.JWT_CLAIM_COMPARISON && claim === 'nonce') {
    return 'The ID token does not carry the nonce plat sent with this login, so it was not issued for this sign-in (OIDC Core §3.1.3.7). Run plat login again; if it repeats, the server is misconfigured.';
  }
  if (/JWT "nonce"/.test(error.message)) {
    return 'The ID token lacks the nonce plat sent with this login, so plat cannot tell it was issued for this sign-in (OIDC Core §3.1.3.7). Run plat login again; if it repeats, the server is misconfigured.';
  }
  return undefined;
}

/**
 * invalid_client from the token endpoint: the server does not know this client (any more), or its secret is wrong.
 * Callers know which client it was and say what to do (register anew, or check --client-id and the secret).
 */
export class ClientRejectedError extends AuthError {
  constructor(readonly description?: string) {
    super(`The server rejected plat's client (invalid_client${description ? `: ${description}` : ''}).`);
    this.name = 'ClientRejectedError';
  }
}

export async function refreshTokens(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  credentials: ClientCredentials,
  input: { previous: Pick<TokenSet, 'refreshToken' | 'idToken' | 'scopes' | 'dpopKey'>; resource?: string; now: number },
): Promise<TokenSet> {
  const endpoint = assertSecureEndpoint(as, 'token_endpoint');
  const refreshToken = input.previous.refreshToken;
  if (!refreshToken) {
    throw new AuthError('The session has expired and has no refresh token. Run plat login to sign in again.');
  }
  const client = toOAuthClient(credentials.registration);
  let result: oauth.TokenEndpointResponse;
  try {
    const key = input.previous.dpopKey as DpopKey | undefined;
    const answer = await withDpopNonce(key, (proof) =>
      oauth.refreshTokenGrantRequest(as, client, clientAuth(credentials, as, 'token'), refreshToken, {
        ...requestOptions(deps, endpoint),
        ...additional(input.resource),
        ...proof,
      }),
    );
    const response = await bearerWhenUntyped(deps, answer);
    result = await oauth.processRefreshTokenResponse(as, client, response);
  } catch (error) {
    const proof = dpopFailure(error);
    if (proof) throw proof;
    const body = oauthErrorOf(error);
    if (body?.error === 'invalid_grant') {
      throw new RefreshRejectedError();
    }
    if (body?.error === 'invalid_client') throw new ClientRejectedError(body.description);
    throw toPlatError(error, 'refreshing the access token', endpoint.origin);
  }
  const session = toSession(result, input.now, input.previous.scopes, input.previous.dpopKey as DpopKey | undefined);
  // RFC 6749 §6: a server that does not rotate returns no refresh token; the old one stays valid.
  session.refreshToken ??= refreshToken;
  session.idToken ??= input.previous.idToken;
  // A token bound to an API (RFC 8707) keeps the identity scopes the session was granted: the refresh answer names
  // the API's scopes only.
  if (input.resource) {
    session.scopes = withIdentityScopes(session.scopes, input.previous.scopes, { idToken: Boolean(session.idToken), refreshToken: Boolean(session.refreshToken) });
  }
  return session;
}

/** The refresh token is dead (expired, revoked, replayed): only a new login helps. */
export class RefreshRejectedError extends AuthError {
  constructor() {
    super('The session has expired or was revoked (the refresh token was rejected).');
    this.name = 'RefreshRejectedError';
  }
}

/** RFC 6749 Appendix A: access and refresh tokens are VSCHAR, printable ASCII. Anything else is refused whole. */
const VSCHAR = /^[\x20-\x7e]+$/;

/** A checked token response as plat keeps it (shared by the code, refresh and device grants). */
export function toSession(result: oauth.TokenEndpointResponse, now: number, requestedScopes: string[], dpop?: DpopKey): TokenSet {
  for (const [name, value] of [['access_token', result.access_token], ['refresh_token', result.refresh_token]] as const) {
    if (value !== undefined && (typeof value !== 'string' || !VSCHAR.test(value))) {
      throw new PlatError(
        `The server's token response has an ${name} with characters a token cannot contain (RFC 6749 Appendix A allows printable ASCII only); plat stored nothing. Report it to the platform.`,
      );
    }
  }
  const type = result.token_type.toLowerCase();
  // A DPoP token only where plat sent a proof (RFC 9449 §5): it is bound to that key, which the session keeps. A
  // server that answered a proof with a Bearer token issued an unbound one: it is kept and used as Bearer.
  const bound = type === 'dpop' && dpop !== undefined;
  if (type !== 'bearer' && !bound) {
    throw new PlatError(`The server issued a "${result.token_type}" token; plat only supports Bearer tokens${dpop ? ' and DPoP-bound ones' : ''}.`);
  }
  return {
    accessToken: result.access_token,
    refreshToken: result.refresh_token,
    idToken: result.id_token,
    tokenType: bound ? 'DPoP' : 'Bearer',
    ...(bound ? { dpopKey: dpop } : {}),
    ...expiryOf(result.expires_in, now),
    obtainedAt: now,
    scopes: typeof result.scope === 'string' && result.scope.trim() ? result.scope.trim().split(/\s+/) : requestedScopes,
  };
}

/** The longest access-token lifetime plat keeps: a year. */
const MAX_TOKEN_LIFETIME_S = 365 * 24 * 3600;

/**
 * expires_in made an absolute expiry plat can store and print: a server's 10^13 seconds is a date no clock shows,
 * so a lifetime past MAX_TOKEN_LIFETIME_S is capped there (and the session says so), never stored as it came.
 */
function expiryOf(expiresIn: number | undefined, now: number): Pick<TokenSet, 'expiresAt' | 'lifetimeCapped'> {
  if (typeof expiresIn !== 'number' || Number.isNaN(expiresIn)) return {};
  if (expiresIn > MAX_TOKEN_LIFETIME_S) return { expiresAt: now + MAX_TOKEN_LIFETIME_S * 1000, lifetimeCapped: true };
  return { expiresAt: now + Math.max(0, expiresIn) * 1000 };
}

/**
 * Why a revocation did not happen, when the server said so: it does not let this client revoke (401, or
 * invalid_client), it does not revoke this kind of token (unsupported_token_type, RFC 7009 §2.2.1), or it
 * answered 400 about the token itself (a token it no longer knows: RFC 7009 §2.2 makes that a success, and
 * the session decides whether it may treat it as one).
 */
export class RevocationRefusedError extends PlatError {
  constructor(
    readonly reason: 'client' | 'token_type' | 'token' | 'missing',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, undefined, options);
    this.name = 'RevocationRefusedError';
  }
}

export async function revokeToken(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  credentials: ClientCredentials,
  token: string,
  hint: 'refresh_token' | 'access_token',
  dpop?: DpopKey,
): Promise<void> {
  const endpoint = assertSecureEndpoint(as, 'revocation_endpoint');
  const which = hint === 'refresh_token' ? 'refresh' : 'access';
  try {
    // RFC 9449 defines no proof for revocation (RFC 7009); a proof is sent all the same where the session is bound,
    // as the same key's holder, for a server that asks for one there.
    const response = await withDpopNonce(dpop, (proof) =>
      oauth.revocationRequest(as, toOAuthClient(credentials.registration), clientAuth(credentials, as, 'revocation'), token, {
        ...requestOptions(deps, endpoint),
        additionalParameters: { token_type_hint: hint },
        ...proof,
      }),
    );
    await oauth.processRevocationResponse(response);
  } catch (error) {
    const body = oauthErrorOf(error) ?? (await challengedError(error));
    const status = body?.status ?? statusOfFailure(error);
    const detail = body ? ` (${body.error}${body.description ? `: ${body.description}` : ''})` : '';
    if (status === 404 || status === 405 || status === 501) {
      throw new RevocationRefusedError('missing', `The server has no revocation endpoint at ${endpoint.origin}${endpoint.pathname} (HTTP ${status}).`, { cause: error });
    }
    if (status === 401 || body?.error === 'invalid_client') {
      throw new RevocationRefusedError('client', `The server refused to let plat's client revoke tokens: it answered HTTP ${status ?? 400}${detail}.`, { cause: error });
    }
    if (body?.error === 'unsupported_token_type') {
      throw new RevocationRefusedError('token_type', `The server does not revoke ${which} tokens${detail}.`, { cause: error });
    }
    if (status === 400 && body) {
      throw new RevocationRefusedError('token', `The server refused to revoke the ${which} token${detail}.`, { cause: error });
    }
    throw toPlatError(error, `revoking the ${which} token`, endpoint.origin);
  }
}

/**
 * A 401 with WWW-Authenticate (a server asking for client credentials) is reported by oauth4webapi before the body
 * is read: the OAuth error is in the body (RFC 6749 §5.2) or, failing that, in the challenge.
 */
async function challengedError(error: unknown): Promise<{ error: string; description?: string; status: number } | undefined> {
  if (!(error instanceof oauth.WWWAuthenticateChallengeError)) return undefined;
  const fromBody = (await error.response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  const fromChallenge = error.cause[0]?.parameters;
  const code = fromBody?.error ?? fromChallenge?.error;
  if (typeof code !== 'string' || !code) return undefined;
  const description = fromBody?.error_description ?? fromChallenge?.error_description;
  return { error: sanitize(code, 80), description: typeof description === 'string' && description ? sanitize(description) : undefined, status: error.status };
}

/** The HTTP status of a failed response that oauth4webapi could not read as an OAuth error. */
function statusOfFailure(error: unknown): number | undefined {
  if (error instanceof oauth.WWWAuthenticateChallengeError) return error.status;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause && typeof cause === 'object' && 'status' in cause && typeof cause.status === 'number' ? cause.status : undefined;
}

/** One oauth4webapi DPoP handle per key for the process: it keeps the token endpoint's nonce (per origin) between requests. */
const handles = new Map<string, Promise<oauth.DPoPHandle>>();

function dpopHandle(key: DpopKey): Promise<oauth.DPoPHandle> {
  const id = String(key.jwk.d);
  let handle = handles.get(id);
  if (!handle) {
    handle = import('./dpop.js').then(async ({ dpopCryptoKeyPair }) => oauth.DPoP({}, (await dpopCryptoKeyPair(key)) as unknown as Parameters<typeof oauth.DPoP>[1]));
    handles.set(id, handle);
  }
  return handle;
}

/**
 * A token-endpoint request with a DPoP proof when the session is bound, answered once more when the server asks for
 * a nonce (RFC 9449 §8: a 400 use_dpop_nonce with DPoP-Nonce, which the handle keeps). Twice is the end: a server
 * that asks again is reported (dpopFailure), never looped on.
 */
export async function withDpopNonce(key: DpopKey | undefined, send: (proof: { DPoP?: oauth.DPoPHandle }) => Promise<Response>): Promise<Response> {
  if (!key) return send({});
  const DPoP = await dpopHandle(key);
  const first = await send({ DPoP });
  if (first.status !== 400 && first.status !== 401) return first;
  if (!first.headers.get('dpop-nonce')) return first;
  const body = (await first.clone().json().catch(() => undefined)) as { error?: unknown } | undefined;
  const challenge = first.headers.get('www-authenticate') ?? '';
  if (body?.error !== 'use_dpop_nonce' && !/use_dpop_nonce/.test(challenge)) return first;
  return send({ DPoP });
}

/** A refusal of the proof itself, in words that say what to do: the nonce asked for again, or the clock. */
export function dpopFailure(error: unknown): PlatError | undefined {
  const body = oauthErrorOf(error);
  if (body?.error === 'use_dpop_nonce') {
    return new PlatError(
      'The authorization server asked for a new DPoP nonce (use_dpop_nonce) again after plat sent the one it gave: plat stopped rather than loop. Try again; if it repeats, the server is misconfigured.',
      undefined,
      { cause: error },
    );
  }
  if (body?.error === 'invalid_dpop_proof' && /\biat\b|recent|time|clock/i.test(body.description ?? '')) {
    return new AuthError(
      `The authorization server refused plat's DPoP proof for its time (invalid_dpop_proof: ${body.description}): this computer's clock is probably wrong. Set the clock right (NTP), then try again.`,
      { cause: error },
    );
  }
  return undefined;
}
