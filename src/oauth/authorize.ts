/**
 * The authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636) and the validation of what comes back to the
 * redirect URI: state, RFC 9207 `iss` (required when the server advertises it), and error responses.
 */
import * as oauth from 'oauth4webapi';
import { AuthError, InterruptedError } from '../errors.js';
import { toOAuthClient } from './client.js';
import { assertSecureEndpoint } from './endpoints.js';
import { toPlatError } from './errors.js';
import type { OAuthDeps } from './options.js';
import type { OAuthClient } from './types.js';

export interface AuthorizationRequest {
  url: URL;
  state: string;
  codeVerifier: string;
  /** Sent whenever `openid` is asked for; the ID token must carry it back. */
  nonce?: string;
  redirectUri: string;
}

/** A fresh `state` (bound to the listener before the client is known), PKCE verifier and OIDC nonce. */
export function newLoginSecrets(): { state: string; codeVerifier: string; nonce: string } {
  return { state: oauth.generateRandomState(), codeVerifier: oauth.generateRandomCodeVerifier(), nonce: oauth.generateRandomNonce() };
}

export async function buildAuthorizationRequest(
  as: oauth.AuthorizationServer,
  registration: OAuthClient,
  input: { redirectUri: string; scopes: string[]; resource?: string; state: string; codeVerifier: string; nonce: string },
): Promise<AuthorizationRequest> {
  const url = assertSecureEndpoint(as, 'authorization_endpoint');
  const { state, codeVerifier } = input;
  const params = url.searchParams;
  params.set('response_type', 'code');
  params.set('client_id', registration.clientId);
  params.set('redirect_uri', input.redirectUri);
  // RFC 6749 §3.3: scope is optional; a server that lists no scope plat would ask for gets none, not an empty one.
  if (input.scopes.length > 0) params.set('scope', input.scopes.join(' '));
  params.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  params.set('code_challenge_method', 'S256');
  params.set('state', state);
  // OIDC Core §15.5.2 recommends a nonce in the code flow, and some providers require it.
  const nonce = input.scopes.includes('openid') ? input.nonce : undefined;
  if (nonce) params.set('nonce', nonce);
  // OIDC Core §11: offline access is asked for with prompt=consent (a provider may otherwise drop the scope).
  if (nonce && input.scopes.includes('offline_access')) params.set('prompt', 'consent');
  if (input.resource) params.set('resource', input.resource);
  return { url, state, codeVerifier, nonce, redirectUri: input.redirectUri };
}

/** Returns the parameters to exchange, or throws the PlatError that explains why the callback is unusable. */
export function validateCallback(
  as: oauth.AuthorizationServer,
  registration: OAuthClient,
  callbackUrl: URL,
  expectedState: string,
): URLSearchParams {
  // state and iss are checked here, from the parameters themselves, so each failure has its one sentence; the
  // protocol library then checks the rest (and these again).
  const params = callbackUrl.searchParams;
  if (params.get('state') !== expectedState) throw new AuthError(CALLBACK_ERRORS.state);
  const iss = params.get('iss');
  if (iss === null && as.authorization_response_iss_parameter_supported === true) throw new AuthError(CALLBACK_ERRORS.issMissing);
  if (iss !== null && iss !== as.issuer) throw new AuthError(CALLBACK_ERRORS.issMismatch);
  try {
    return oauth.validateAuthResponse(as, toOAuthClient(registration), callbackUrl, expectedState);
  } catch (error) {
    throw toPlatError(error, 'completing the sign-in', callbackUrl.origin);
  }
}

/** The callback failures plat tells apart (RFC 6749 §10.12 state, RFC 9207 iss), one sentence each. */
export const CALLBACK_ERRORS = {
  state: 'The sign-in response does not belong to this login (state mismatch). Run plat login again.',
  issMissing:
    'The sign-in response lacks the "iss" parameter that the server announced it would send. Run plat login again; if it repeats, the server is misconfigured.',
  issMismatch:
    'The sign-in response came from a different authorization server than the one plat asked (iss mismatch). Run plat login again; if it repeats, the server or a proxy is misconfigured.',
} as const;

export type ProbeResult = 'accepted' | 'rejected' | 'unknown';

/**
 * Asks the authorization endpoint, without a browser, whether it accepts this client with this redirect URI. A
 * server that does not (an unknown client, a redirect URI it does not match) must not redirect back (RFC 6749
 * §4.1.2.1): it shows the browser an error page, which plat never sees. This costs one request, so plat asks only
 * off the normal path: when the callback port changed, and when a login with a stored client got no answer.
 * A redirect (to a sign-in page, or an error sent to our redirect URI) or a page means accepted; a 4xx page means
 * rejected; anything else (5xx, no answer) is unknown and changes nothing.
 */
export async function probeAuthorization(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  registration: OAuthClient,
  input: { redirectUri: string; scopes: string[] },
): Promise<ProbeResult> {
  const { url } = await buildAuthorizationRequest(as, registration, { ...input, ...newLoginSecrets() });
  try {
    const response = await deps.fetch(url, { method: 'GET', redirect: 'manual', headers: { accept: 'text/html' }, maxBodyBytes: 256 * 1024 });
    await response.body?.cancel().catch(() => {});
    if (response.status < 400) return 'accepted';
    return response.status < 500 ? 'rejected' : 'unknown';
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    return 'unknown';
  }
}
