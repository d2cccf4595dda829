/**
 * `plat discover`: what the platform publishes about signing in — the protected-resource metadata (RFC 9728) and
 * the authorization server's metadata (RFC 8414 / OpenID discovery) — as plat understood it: endpoints, grants,
 * PKCE methods, registration. Needs no session; uses (and fills) the discovery cache.
 */
import type { Context } from '../context.js';
import { sanitize } from '../terminal/text.js';
import { currentProfile, discover, requirePlatform } from '../session/index.js';
import { iso, printJson, rows } from './shared/format.js';
import { age } from './shared/table.js';

export interface DiscoverFlags {
  refresh?: boolean;
}

/** `plat discover --json`. Lists are null when the metadata does not state them. */
interface DiscoverOutput {
  baseUrl: string;
  issuer: string;
  /** The protected-resource metadata's `resource`; null when the API publishes none. */
  resource: string | null;
  authorizationServers: string[];
  endpoints: {
    authorization: string | null;
    token: string | null;
    registration: string | null;
    userinfo: string | null;
    revocation: string | null;
    /** RFC 8628: where `plat login --device` asks for a code; null when the server offers no device flow. */
    deviceAuthorization: string | null;
    introspection: string | null;
    jwks: string | null;
  };
  grantTypes: string[] | null;
  responseTypes: string[] | null;
  pkceMethods: string[] | null;
  tokenEndpointAuthMethods: string[] | null;
  scopes: string[] | null;
  issParameterSupported: boolean;
  clientIdMetadataDocumentSupported: boolean | null;
  /** Endpoints the metadata lacks, filled in from the platform's documented paths. */
  filledFromSpec: string[];
  fetchedAt: string;
  /** The documents as received (the authorization server's with any filled-in endpoints). */
  metadata: { authorizationServer: Record<string, unknown>; protectedResource: Record<string, unknown> | null };
}

const strings = (value: unknown): string[] | null =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null;
const string = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export async function run(ctx: Context, flags: DiscoverFlags): Promise<void> {
  const { io } = ctx;
  const baseUrl = requirePlatform(ctx, await currentProfile(ctx));
  const discovery = await discover(ctx, baseUrl, { refresh: flags.refresh });
  const as = discovery.as as unknown as Record<string, unknown>;
  const resource = (discovery.resource ?? null) as Record<string, unknown> | null;
  const output: DiscoverOutput = {
    baseUrl,
    issuer: discovery.issuer,
    resource: string(resource?.resource),
    authorizationServers: strings(resource?.authorization_servers) ?? [discovery.issuer],
    endpoints: {
      authorization: string(as.authorization_endpoint),
      token: string(as.token_endpoint),
      registration: string(as.registration_endpoint),
      userinfo: string(as.userinfo_endpoint),
      revocation: string(as.revocation_endpoint),
      deviceAuthorization: string(as.device_authorization_endpoint),
      introspection: string(as.introspection_endpoint),
      jwks: string(as.jwks_uri),
    },
    grantTypes: strings(as.grant_types_supported),
    responseTypes: strings(as.response_types_supported),
    pkceMethods: strings(as.code_challenge_methods_supported),
    tokenEndpointAuthMethods: strings(as.token_endpoint_auth_methods_supported),
    scopes: strings(as.scopes_supported),
    issParameterSupported: as.authorization_response_iss_parameter_supported === true,
    clientIdMetadataDocumentSupported:
      typeof as.client_id_metadata_document_supported === 'boolean' ? as.client_id_metadata_document_supported : null,
    filledFromSpec: discovery.filledFromSpec,
    fetchedAt: iso(discovery.fetchedAt)!,
    metadata: { authorizationServer: as, protectedResource: resource },
  };

  if (ctx.globals.json) {
    printJson(io, output);
    return;
  }
  const filled = new Set(discovery.filledFromSpec);
  // Every value below was written by the server: made safe before plat prints it.
  const safe = (value: string) => sanitize(value, 0);
  const endpoint = (value: string | null, name: string) =>
    value === null ? '(none)' : filled.has(name) ? `${safe(value)}  ${io.dim('(documented path; not in the metadata)')}` : safe(value);
  const list = (value: string[] | null) => (value === null ? io.dim('(not stated)') : safe(value.join(' ')) || io.dim('(none)'));
  const pkce = output.pkceMethods;
  const entries: Array<[string, string]> = [
    ['Platform', baseUrl],
    ['Resource', output.resource !== null ? safe(output.resource) : io.dim('(no protected-resource metadata; the API is its own authorization server)')],
    ['Issuer', safe(output.issuer)],
    ['Authorization', endpoint(output.endpoints.authorization, 'authorization_endpoint')],
    ['Token', endpoint(output.endpoints.token, 'token_endpoint')],
    ['Registration', output.endpoints.registration ? endpoint(output.endpoints.registration, 'registration_endpoint') : io.dim('(none: needs a pre-registered --client-id)')],
    ['UserInfo', endpoint(output.endpoints.userinfo, 'userinfo_endpoint')],
    ['Revocation', endpoint(output.endpoints.revocation, 'revocation_endpoint')],
  ];
  if (output.endpoints.deviceAuthorization) entries.push(['Device authorization', `${safe(output.endpoints.deviceAuthorization)} ${io.dim('(plat login --device)')}`]);
  if (output.endpoints.introspection) entries.push(['Introspection', safe(output.endpoints.introspection)]);
  if (output.endpoints.jwks) entries.push(['JWKS', safe(output.endpoints.jwks)]);
  entries.push(
    ['Grant types', list(output.grantTypes)],
    ['Response types', list(output.responseTypes)],
    ['PKCE methods', pkce === null ? io.dim('(not stated; plat uses S256)') : `${safe(pkce.join(' '))}${pkce.includes('S256') ? '' : '  (no S256: plat cannot log in)'}`],
    ['Client auth', list(output.tokenEndpointAuthMethods)],
    ['iss parameter', output.issParameterSupported ? 'yes (RFC 9207)' : 'not announced'],
    ['Scopes', output.scopes === null ? io.dim('(not stated)') : `${output.scopes.length} (plat scopes lists them)`],
    ['Fetched', `${age(discovery.fetchedAt, ctx.now())} (${output.fetchedAt}; cached for an hour, --refresh fetches again)`],
  );
  io.out(rows(io, entries));
}
