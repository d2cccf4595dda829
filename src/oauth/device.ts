/**
 * The device authorization grant (RFC 8628): ask for a user code, then poll the token endpoint until the user has
 * approved on another device. Each step is one oauth4webapi request/process pair; the waiting between polls is the
 * session's (it owns the clock, Ctrl-C and --timeout).
 * @see https://www.rfc-editor.org/rfc/rfc8628
 */
import * as oauth from 'oauth4webapi';
import { AuthError, PlatError } from '../errors.js';
import { isSecureOrLoopback } from './base-url.js';
import { clientAuth, toOAuthClient, type ClientCredentials } from './client.js';
import { assertSecureEndpoint } from './endpoints.js';
import { oauthErrorOf, toPlatError } from './errors.js';
import { requestOptions, type OAuthDeps } from './options.js';
import { bearerWhenUntyped } from './token-type.js';
import { dpopFailure, heldByServer, toSession, withDpopNonce } from './tokens.js';
import type { DpopKey } from './dpop.js';
import { sanitize } from '../terminal/text.js';
import type { TokenSet } from './types.js';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** Whether the server offers the device flow: an endpoint, and the grant type where it lists grant types. */
export function offersDeviceFlow(as: oauth.AuthorizationServer): boolean {
  if (typeof as.device_authorization_endpoint !== 'string') return false;
  const listed = as.grant_types_supported;
  return !Array.isArray(listed) || listed.length === 0 || listed.includes(DEVICE_GRANT_TYPE);
}

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: URL;
  /** The address with the code in it (RFC 8628 §3.3.1), when the server gives one on its own origin. */
  verificationUriComplete?: URL;
  expiresAt: number;
  /** Seconds between polls (RFC 8628 §3.2: 5 when the server says nothing). */
  interval: number;
}

export async function startDeviceAuthorization(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  credentials: ClientCredentials,
  input: { scopes: string[]; resource?: string; now: number },
): Promise<DeviceAuthorization> {
  const endpoint = assertSecureEndpoint(as, 'device_authorization_endpoint');
  const client = toOAuthClient(credentials.registration);
  const parameters: Record<string, string> = {};
  if (input.scopes.length > 0) parameters.scope = input.scopes.join(' ');
  if (input.resource) parameters.resource = input.resource;
  let answer: oauth.DeviceAuthorizationResponse;
  try {
    const response = await oauth.deviceAuthorizationRequest(as, client, clientAuth(credentials, as, 'token'), parameters, requestOptions(deps, endpoint));
    answer = await oauth.processDeviceAuthorizationResponse(as, client, response);
  } catch (error) {
    const body = oauthErrorOf(error);
    if (body?.error === 'invalid_target') throw new DeviceTargetRefusedError(body.description);
    throw toPlatError(error, 'asking for a device code', endpoint.origin);
  }
  const verificationUri = verificationAddress(answer.verification_uri);
  const complete = answer.verification_uri_complete ? verificationAddress(answer.verification_uri_complete) : undefined;
  // The user code is typed by a person and shown by plat: printable ASCII only (spaces inside, as in "WDJB MJHT",
  // are printable too), and short.
  if (!/^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/.test(answer.user_code)) {
    throw new PlatError('The server sent a user code plat cannot show safely (RFC 8628 §6.1 asks for a short code of printable characters). Report it to the platform.');
  }
  return {
    deviceCode: answer.device_code,
    userCode: answer.user_code,
    verificationUri,
    // The complete address is opened and shown as a QR code only when it is on the same origin as the plain one.
    verificationUriComplete: complete && complete.origin === verificationUri.origin ? complete : undefined,
    expiresAt: input.now + answer.expires_in * 1000,
    interval: typeof answer.interval === 'number' && answer.interval > 0 ? Math.min(answer.interval, 60) : 5,
  };
}

/** A verification address a person may be sent to: https (http only on loopback, for local servers). */
function verificationAddress(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PlatError('The server sent a verification address that is not a URL.');
  }
  if (!isSecureOrLoopback(url)) {
    // A scheme other than http(s) has no origin ("null"): it is named by its scheme, javascript: or data:, and is
    // neither shown as a link nor opened.
    const named = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `a ${url.protocol} address`;
    throw new PlatError(`The server sent a verification address that is not https:// (${sanitize(named, 120)}); plat will not show it or send you there.`);
  }
  if (url.username || url.password) throw new PlatError('The server sent a verification address with a user name or password in it; plat will not send you there.');
  return url;
}

/** One poll's outcome that is not tokens: keep waiting, wait longer, or stop (RFC 8628 §3.5). */
export type PollAnswer = { kind: 'pending' } | { kind: 'slow_down' };

export async function pollDeviceToken(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  credentials: ClientCredentials,
  input: { deviceCode: string; resource?: string; requestedScopes: string[]; now: number; dpop?: DpopKey },
): Promise<DeviceTokens | PollAnswer> {
  const endpoint = assertSecureEndpoint(as, 'token_endpoint');
  const client = toOAuthClient(credentials.registration);
  let result: oauth.TokenEndpointResponse;
  let issued = false;
  try {
    const answer = await withDpopNonce(input.dpop, (proof) =>
      oauth.deviceCodeGrantRequest(as, client, clientAuth(credentials, as, 'token'), input.deviceCode, {
        ...requestOptions(deps, endpoint),
        ...(input.resource ? { additionalParameters: { resource: input.resource } } : {}),
        ...proof,
      }),
    );
    issued = answer.status === 200;
    result = await oauth.processDeviceCodeResponse(as, client, await bearerWhenUntyped(deps, answer));
  } catch (error) {
    if (issued) throw heldByServer(toPlatError(error, 'waiting for the device sign-in', endpoint.origin));
    const proof = dpopFailure(error);
    if (proof) throw proof;
    const body = oauthErrorOf(error);
    switch (body?.error) {
      case 'authorization_pending':
        return { kind: 'pending' };
      case 'slow_down':
        return { kind: 'slow_down' };
      case 'access_denied':
        throw new AuthError('The sign-in was denied on the verification page (access_denied), so nothing was signed in.', { cause: error });
      case 'expired_token':
        throw new DeviceCodeExpiredError();
      case 'invalid_target':
        throw new DeviceTargetRefusedError(body.description);
      case 'invalid_grant':
        throw new DeviceCodeRejectedError(body.description);
      default:
        throw toPlatError(error, 'waiting for the device sign-in', endpoint.origin);
    }
  }
  const claims = result.id_token ? oauth.getValidatedIdTokenClaims(result) : undefined;
  try {
    return { session: toSession(result, input.now, input.requestedScopes, input.dpop), idTokenClaims: claims };
  } catch (error) {
    throw error instanceof PlatError ? heldByServer(error) : error;
  }
}

/** The device grant's tokens, and the claims of the ID token that came with them (validated; no nonce in this flow). */
export interface DeviceTokens {
  session: TokenSet;
  idTokenClaims?: Record<string, unknown> & { sub: string };
}

/**
 * The server does not take the resource indicator in the device flow (RFC 8707 invalid_target): exit 4, as the
 * browser flow's refusal of the same --resource.
 */
export class DeviceTargetRefusedError extends AuthError {
  constructor(description?: string) {
    super(`The server refused the resource indicator (invalid_target${description ? `: ${sanitize(description)}` : ''}). Check --resource, or sign in without it.`);
    this.name = 'DeviceTargetRefusedError';
  }
}

/** The server says the device code expired (expired_token): its clock, or its rounding, ran out before plat's. */
export class DeviceCodeExpiredError extends AuthError {
  constructor() {
    super('The code expired before anyone approved it (expired_token), so nothing was signed in. Run plat login --device again.');
    this.name = 'DeviceCodeExpiredError';
  }
}

/** The server no longer knows the device code (invalid_grant): it expired (some servers forget it then) or was used. */
export class DeviceCodeRejectedError extends AuthError {
  constructor(description?: string) {
    super(`The server no longer accepts this sign-in code (invalid_grant${description ? `: ${sanitize(description)}` : ''}), so nothing was signed in.`);
    this.name = 'DeviceCodeRejectedError';
  }
}
