/**
 * Finding the authorization server for an API: RFC 9728 protected-resource metadata at the base URL names it;
 * its RFC 8414 metadata (falling back to OpenID discovery) lists the endpoints. Metadata is the source of truth;
 * the spec's documented paths fill in only what a document leaves out.
 * @see https://www.rfc-editor.org/rfc/rfc9728  @see https://www.rfc-editor.org/rfc/rfc8414
 */
import * as oauth from 'oauth4webapi';
import { PlatError } from '../errors.js';
import { isSecureOrLoopback } from './base-url.js';
import { SPEC_PATHS } from './endpoints.js';
import { toPlatError } from './errors.js';
import { requestOptions, type OAuthDeps } from './options.js';

export interface Discovery {
  baseUrl: string;
  issuer: string;
  /** RFC 9728 document, when the API publishes one. */
  resource?: oauth.ResourceServer;
  as: oauth.AuthorizationServer;
  /** Endpoints taken from the spec's documented paths because the metadata lacked them. */
  filledFromSpec: string[];
  fetchedAt: number;
}

export async function discover(deps: OAuthDeps, baseUrl: string, now: number): Promise<Discovery> {
  const base = new URL(baseUrl);
  const resource = await discoverResource(deps, base);
  const issuer = chooseIssuer(resource, baseUrl);
  const as = await discoverAuthorizationServer(deps, new URL(issuer));
  const filledFromSpec = fillFromSpec(as, baseUrl);
  return { baseUrl, issuer: as.issuer, resource, as, filledFromSpec, fetchedAt: now };
}

async function discoverResource(deps: OAuthDeps, base: URL): Promise<oauth.ResourceServer | undefined> {
  const step = 'reading the API\'s protected-resource metadata';
  try {
    const response = await oauth.resourceDiscoveryRequest(base, requestOptions(deps, base));
    // An API that does not publish RFC 9728 metadata is its own authorization server (the spec's layout).
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return await oauth.processResourceDiscoveryResponse(base, response);
  } catch (error) {
    throw toPlatError(error, step, base.origin);
  }
}

function chooseIssuer(resource: oauth.ResourceServer | undefined, baseUrl: string): string {
  const servers = resource?.authorization_servers;
  if (!servers || servers.length === 0) return baseUrl;
  const issuer = servers.find((s) => typeof s === 'string') ?? baseUrl;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new PlatError(`The API's protected-resource metadata names an authorization server that is not a URL.`);
  }
  if (!isSecureOrLoopback(url)) {
    throw new PlatError(`The API names an authorization server that is not https:// (${url.origin}); plat refuses to use it.`);
  }
  return issuer;
}

async function discoverAuthorizationServer(deps: OAuthDeps, issuer: URL): Promise<oauth.AuthorizationServer> {
  const step = 'reading the authorization server metadata';
  try {
    let response = await oauth.discoveryRequest(issuer, { ...requestOptions(deps, issuer), algorithm: 'oauth2' });
    if (response.status === 404) {
      await response.body?.cancel();
      response = await oauth.discoveryRequest(issuer, { ...requestOptions(deps, issuer), algorithm: 'oidc' });
    }
    if (response.status === 404) {
      // Neither metadata document exists: a wrong address (often a base URL with a path the platform does not
      // have), not a server having a bad day.
      await response.body?.cancel();
      throw noMetadataError(issuer);
    }
    return await oauth.processDiscoveryResponse(issuer, response);
  } catch (error) {
    if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
      throw new PlatError(
        `The authorization server metadata at ${issuer.origin} names a different issuer than the one it is served for; plat will not trust it.`,
        undefined,
        { cause: error },
      );
    }
    throw toPlatError(error, step, issuer.origin);
  }
}

function noMetadataError(issuer: URL): PlatError {
  const address = issuer.href.replace(/\/$/, '');
  const hasPath = issuer.pathname !== '/' && issuer.pathname !== '';
  return new PlatError(
    `There is no platform at ${address}: it publishes no sign-in metadata (HTTP 404 for its OAuth and OpenID Connect discovery documents). ` +
      (hasPath
        ? `Check the base URL; a platform's address usually has no path (try --base-url ${issuer.origin}).`
        : 'Check the base URL (plat discover --base-url <url> shows what an address publishes).'),
  );
}

/**
 * The spec's documented paths describe the platform's own authorization server: they fill in an endpoint only
 * for an issuer on the base URL's own origin. For an issuer elsewhere, an endpoint its metadata omits is absent
 * (RFC 8414 §2) — guessing would send codes, verifiers or tokens to the API instead.
 */
function fillFromSpec(as: oauth.AuthorizationServer, baseUrl: string): string[] {
  const filled: string[] = [];
  if (new URL(as.issuer).origin !== new URL(baseUrl).origin) return filled;
  const record = as as unknown as Record<string, unknown>;
  for (const [name, path] of Object.entries(SPEC_PATHS)) {
    if (typeof record[name] !== 'string') {
      record[name] = `${baseUrl}${path}`;
      filled.push(name);
    }
  }
  return filled;
}

export { assertS256, assertSecureEndpoint, SPEC_PATHS } from './endpoints.js';
