/**
 * The OAuth client plat acts as: a self-registered public native client (RFC 7591, RFC 8252), or a
 * pre-registered integration named with --client-id (public, or confidential with client_secret_post).
 */
import * as oauth from 'oauth4webapi';
import { PlatError } from '../errors.js';
import type { ClientRegistration } from '../store/types.js';
import { oauthErrorOf, toPlatError } from './errors.js';
import { requestOptions, type OAuthDeps } from './options.js';

export interface ClientCredentials {
  registration: ClientRegistration;
  /** Only for client_secret_post integrations; never written to the config file. */
  secret?: string;
}

export function toOAuthClient(registration: ClientRegistration): oauth.Client {
  return { client_id: registration.clientId, token_endpoint_auth_method: registration.authMethod };
}

export function clientAuth(credentials: ClientCredentials): oauth.ClientAuth {
  if (credentials.registration.authMethod === 'client_secret_post') {
    if (!credentials.secret) {
      throw new PlatError('This profile uses a confidential integration but its client secret is missing. Run plat login --client-id <id> --client-secret-stdin again.');
    }
    return oauth.ClientSecretPost(credentials.secret);
  }
  return oauth.None();
}

export async function registerClient(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  input: { redirectUri: string; clientName: string; now: number },
): Promise<ClientRegistration> {
  const step = 'registering plat as a client';
  if (!as.registration_endpoint) {
    throw new PlatError(
      'The authorization server does not offer dynamic client registration. Use a pre-registered integration: plat login --client-id <id>.',
    );
  }
  let client: Awaited<ReturnType<typeof oauth.processDynamicClientRegistrationResponse>>;
  try {
    let response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: input.clientName,
        application_type: 'native',
        redirect_uris: [input.redirectUri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      requestOptions(deps, as.registration_endpoint),
    );
    // RFC 7591 says 201; some servers answer 200 with the same body, which is just as usable.
    if (response.status === 200) response = new Response(response.body, { status: 201, headers: response.headers });
    client = await oauth.processDynamicClientRegistrationResponse(response);
  } catch (error) {
    const body = oauthErrorOf(error);
    if (body?.error === 'invalid_redirect_uri') {
      throw new PlatError(
        `The server refused to register plat's redirect address ${input.redirectUri} (invalid_redirect_uri${body.description ? `: ${body.description}` : ''}). Self-registration needs a loopback address; for any other setup use a pre-registered integration with --client-id.`,
        undefined,
        { cause: error },
      );
    }
    if (body) {
      throw new PlatError(
        `The server refused to register plat (${body.error}${body.description ? `: ${body.description}` : ''}). Try again later, or use a pre-registered integration with --client-id.`,
        undefined,
        { cause: error },
      );
    }
    throw toPlatError(error, step, new URL(as.registration_endpoint).origin);
  }
  return {
    clientId: client.client_id,
    authMethod: 'none',
    issuer: as.issuer,
    redirectUris: (client.redirect_uris as string[] | undefined) ?? [input.redirectUri],
    dynamic: true,
    registeredAt: input.now,
  };
}
