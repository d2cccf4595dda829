/**
 * The OAuth client plat acts as: a self-registered public native client (RFC 7591, RFC 8252), a pre-registered
 * integration named with --client-id (public, or confidential: client_secret_post or client_secret_basic, whichever
 * the server's metadata offers), or a public client whose
 * client_id is the https URL of its own metadata document (--client-metadata-url).
 * @see https://datatracker.ietf.org/doc/draft-ietf-oauth-client-id-metadata-document/
 */
import * as oauth from 'oauth4webapi';
import { PlatError, UsageError } from '../errors.js';
import { isLoopbackHost } from './base-url.js';
import { assertSecureEndpoint } from './endpoints.js';
import { sanitize } from '../terminal/text.js';
import { bodyFailure, oauthErrorOf, toPlatError } from './errors.js';
import { requestOptions, type OAuthDeps } from './options.js';
import type { OAuthClient } from './types.js';

export interface ClientCredentials {
  registration: OAuthClient;
  /** Only for client_secret_post integrations; never written to the config file. */
  secret?: string;
}

export function toOAuthClient(registration: OAuthClient): oauth.Client {
  return { client_id: registration.clientId, token_endpoint_auth_method: registration.authMethod };
}

/** Which endpoint a client authenticates at: each has its own list of methods in the server's metadata (RFC 8414 §2). */
export type AuthenticatedEndpoint = 'token' | 'revocation';

/**
 * How a confidential client sends its secret to one endpoint: client_secret_post (the platform's documented method)
 * when the server lists it or lists nothing, client_secret_basic when that is all it lists. The stored
 * registration says only that the client is confidential; the server's metadata decides the method, per endpoint.
 */
export function secretMethod(as: oauth.AuthorizationServer, endpoint: AuthenticatedEndpoint): 'client_secret_post' | 'client_secret_basic' {
  const record = as as unknown as Record<string, unknown>;
  const listed = record[`${endpoint}_endpoint_auth_methods_supported`] ?? (endpoint === 'revocation' ? as.token_endpoint_auth_methods_supported : undefined);
  if (!Array.isArray(listed) || listed.length === 0 || listed.includes('client_secret_post')) return 'client_secret_post';
  return listed.includes('client_secret_basic') ? 'client_secret_basic' : 'client_secret_post';
}

export function clientAuth(credentials: ClientCredentials, as: oauth.AuthorizationServer, endpoint: AuthenticatedEndpoint): oauth.ClientAuth {
  const { registration } = credentials;
  if (registration.authMethod === 'client_secret_post') {
    if (!credentials.secret) {
      throw new PlatError(
        registration.dynamic
          ? "The secret of plat's registration at this server is missing. Run plat login to register again."
          : 'This profile uses a confidential integration but its client secret is missing. Run plat login --client-id <id> --client-secret-stdin again.',
      );
    }
    const method = registration.secretMethod ?? secretMethod(as, endpoint);
    return method === 'client_secret_basic' ? clientSecretBasic(credentials.secret) : oauth.ClientSecretPost(credentials.secret);
  }
  return oauth.None();
}

/**
 * HTTP Basic client authentication (RFC 6749 §2.3.1): client_id and secret each form-urlencoded, then joined and
 * base64-encoded. Encoded with the WHATWG serializer (URLSearchParams), which leaves `*-._` as they are, where
 * oauth4webapi's own encoder escapes them: both are application/x-www-form-urlencoded and a server that decodes
 * reads either the same, but servers that forget to decode (Authlib 1.2, in Debian 12) read only this one right.
 */
function clientSecretBasic(secret: string): oauth.ClientAuth {
  const encode = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);
  return (_as, client, _body, headers) => {
    headers.set('authorization', `Basic ${Buffer.from(`${encode(client.client_id)}:${encode(secret)}`).toString('base64')}`);
  };
}

/**
 * Whether the server lets this client authenticate at its revocation endpoint. A public client sends only its
 * client_id (auth method `none`); a server whose metadata lists revocation methods without `none` refuses it.
 * Metadata that lists nothing is tried (RFC 7009 §5 lets public clients revoke; many servers do not say).
 */
export function mayRevoke(as: oauth.AuthorizationServer, registration: OAuthClient): { ok: true } | { ok: false; methods: string[] } {
  if (registration.authMethod !== 'none') return { ok: true };
  const listed = (as as unknown as Record<string, unknown>).revocation_endpoint_auth_methods_supported;
  if (!Array.isArray(listed) || listed.length === 0 || listed.includes('none')) return { ok: true };
  return { ok: false, methods: listed.filter((m): m is string => typeof m === 'string').map((m) => sanitize(m, 40)) };
}

/** A client the server already knows (pre-registered, or described by a metadata document): nothing to register. */
export function knownClient(
  input: { clientId: string; secret?: string; issuer: string; redirectUri: string; now: number },
): ClientCredentials {
  return {
    registration: {
      clientId: input.clientId,
      authMethod: input.secret ? 'client_secret_post' : 'none',
      issuer: input.issuer,
      redirectUris: [input.redirectUri],
      dynamic: false,
      registeredAt: input.now,
    },
    secret: input.secret,
  };
}

/** Whether a stored registration is a metadata-document client (its client_id is the document's URL). */
export function isMetadataDocumentClient(registration: OAuthClient): boolean {
  return !registration.dynamic && /^https?:\/\//i.test(registration.clientId);
}

/**
 * Checks --client-metadata-url the way the draft constrains a client_id URL: https (http only on loopback, for
 * testing), a path, no fragment, no user name or password, no dot segments. Returns it unchanged: the
 * client_id must equal the document's URL byte for byte, so plat does not normalise it.
 */
export function parseClientMetadataUrl(input: string): string {
  const bad = (why: string) =>
    new UsageError(`--client-metadata-url must be the https:// URL of your client's metadata document (${why}): ${input}`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw bad('not a URL');
  }
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)))) {
    throw bad('http:// is accepted only for 127.0.0.1, localhost and [::1]');
  }
  const origin = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(input);
  if (origin?.[1]?.includes('@')) throw bad('it must not contain a user name or password');
  if (input.includes('#')) throw bad('it must not contain a fragment');
  // The raw path: URL() would already have removed the dot segments the draft forbids.
  const rawPath = input.slice(origin?.[0].length ?? 0).split('?')[0] ?? '';
  if (rawPath === '' || rawPath === '/') throw bad('it needs a path, e.g. https://example.com/plat/client.json');
  const segments = rawPath.split('/').map((segment) => segment.replace(/%2e/gi, '.'));
  if (segments.some((segment) => segment === '.' || segment === '..')) throw bad('it must not contain . or .. path segments');
  return input;
}

/**
 * The server must say it resolves URL client_ids; otherwise it would treat the URL as an unknown client and show
 * the browser an error page plat never sees.
 */
export function supportsClientMetadataDocuments(as: oauth.AuthorizationServer): boolean {
  return (as as unknown as Record<string, unknown>).client_id_metadata_document_supported === true;
}

/**
 * How plat asks to authenticate at the token endpoint when it registers: as a public client (`none`, RFC 8252)
 * where the server offers that or lists nothing; otherwise as the confidential client the server wants, with a
 * per-install secret (RFC 8252 §8.4), by the secret method the server lists first of the two plat speaks.
 */
function registrationAuthMethod(as: oauth.AuthorizationServer): 'none' | 'client_secret_post' | 'client_secret_basic' {
  const listed = as.token_endpoint_auth_methods_supported;
  if (!Array.isArray(listed) || listed.length === 0 || listed.includes('none')) return 'none';
  if (listed.includes('client_secret_post')) return 'client_secret_post';
  if (listed.includes('client_secret_basic')) return 'client_secret_basic';
  return 'none';
}

/** A new registration: the client, and the secret the server assigned to it (kept in the token store, never in the config). */
export interface NewRegistration {
  registration: OAuthClient;
  secret?: string;
}

export async function registerClient(
  deps: OAuthDeps,
  as: oauth.AuthorizationServer,
  input: { redirectUri: string; clientName: string; scopes: string[]; now: number; guessedEndpoint?: boolean; grantTypes?: string[] },
): Promise<NewRegistration> {
  const step = 'registering plat as a client';
  if (!as.registration_endpoint) throw new NoRegistrationError();
  const endpoint = assertSecureEndpoint(as, 'registration_endpoint');
  const asked = registrationAuthMethod(as);
  const grantTypes = input.grantTypes ?? ['authorization_code', 'refresh_token'];
  // A client for the device flow alone has no redirect (RFC 8628 §3.4); any other gets plat's loopback address.
  const redirects = grantTypes.includes('authorization_code');
  let client: Record<string, unknown>;
  try {
    let response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: input.clientName,
        application_type: 'native',
        ...(redirects ? { redirect_uris: [input.redirectUri], response_types: ['code'] } : { response_types: [] }),
        token_endpoint_auth_method: asked,
        // RFC 7591 §2: without `scope` some servers register a client that may ask for nothing at all.
        ...(input.scopes.length > 0 ? { scope: input.scopes.join(' ') } : {}),
        grant_types: grantTypes,
      },
      requestOptions(deps, endpoint),
    );
    // The documented path guessed for a server whose metadata lists no registration endpoint: nothing there
    // means the server does not offer registration, which has its own sentence.
    if (input.guessedEndpoint && [404, 405, 501].includes(response.status)) {
      await response.body?.cancel();
      throw new NoRegistrationError();
    }
    response = await liberalRegistrationResponse(response);
    client = await oauth.processDynamicClientRegistrationResponse(response);
  } catch (error) {
    if (error instanceof NoRegistrationError) throw error;
    const broken = bodyFailure(error, endpoint.origin);
    if (broken) throw broken;
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
  const assigned = assignedClient(client, as, input, asked);
  assigned.registration.grantTypes = grantTypes;
  if (!redirects) assigned.registration.redirectUris = [];
  return assigned;
}

/**
 * What the server registered, read liberally (RFC 7591 §3.2.1): the method and secret it assigned win over what plat
 * asked for; an omitted method is the one asked for (a secret without a method is used as the metadata prefers).
 */
function assignedClient(
  client: Record<string, unknown>,
  as: oauth.AuthorizationServer,
  input: { redirectUri: string; scopes: string[]; now: number },
  asked: ReturnType<typeof registrationAuthMethod>,
): NewRegistration {
  const secret = typeof client.client_secret === 'string' && client.client_secret ? client.client_secret : undefined;
  const assigned = typeof client.token_endpoint_auth_method === 'string' ? client.token_endpoint_auth_method : secret ? (asked === 'none' ? undefined : asked) : asked;
  const base = {
    clientId: client.client_id as string,
    issuer: as.issuer,
    redirectUris: Array.isArray(client.redirect_uris) && client.redirect_uris.every((u) => typeof u === 'string') ? (client.redirect_uris as string[]) : [input.redirectUri],
    // What plat asked to register: a later login that asks for more registers anew (see settleClient).
    scopes: input.scopes,
    dynamic: true,
    registeredAt: input.now,
  };
  if (assigned === 'none' || (assigned === undefined && !secret)) return { registration: { ...base, authMethod: 'none' } };
  if (assigned !== undefined && assigned !== 'client_secret_post' && assigned !== 'client_secret_basic') {
    throw new PlatError(
      `The server registered plat with the client authentication method ${sanitize(assigned, 60)}, which plat does not support (it speaks none, client_secret_post and client_secret_basic). Use a pre-registered integration with --client-id.`,
    );
  }
  if (!secret) {
    throw new PlatError(
      `The server registered plat as a confidential client (${assigned}) but sent no client_secret (RFC 7591 §3.2.1), so plat cannot use the registration. Use a pre-registered integration with --client-id.`,
    );
  }
  const expiresAt = typeof client.client_secret_expires_at === 'number' && client.client_secret_expires_at > 0 ? client.client_secret_expires_at * 1000 : undefined;
  return {
    registration: { ...base, authMethod: 'client_secret_post', ...(assigned ? { secretMethod: assigned } : {}), ...(expiresAt ? { secretExpiresAt: expiresAt } : {}) },
    secret,
  };
}

/**
 * The registration answer as the protocol library can check it: RFC 7591 says 201, some servers answer 200 with
 * the same body; a secret without `client_secret_expires_at` (which §3.2.1 asks for, and real servers omit) takes
 * its meaning "does not expire" (0). Anything else is passed on untouched, to be checked as it is.
 */
async function liberalRegistrationResponse(response: Response): Promise<Response> {
  if (response.status !== 200 && response.status !== 201) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    if (typeof record.client_secret === 'string' && record.client_secret && record.client_secret_expires_at === undefined) {
      return new Response(JSON.stringify({ ...record, client_secret_expires_at: 0 }), { status: 201, headers: response.headers });
    }
  }
  return new Response(text, { status: 201, headers: response.headers });
}

/** The server offers no dynamic registration (its metadata lists none, and none is at the documented path). */
class NoRegistrationError extends PlatError {
  constructor() {
    super('The authorization server does not offer dynamic client registration. Use a pre-registered integration: plat login --client-id <id>.');
    this.name = 'NoRegistrationError';
  }
}
