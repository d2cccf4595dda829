/**
 * Finding the authorization server for an API: RFC 9728 protected-resource metadata at the base URL names it;
 * its RFC 8414 metadata (falling back to OpenID discovery) lists the endpoints. Metadata is the source of truth;
 * the spec's documented paths fill in only what a document leaves out.
 * @see https://www.rfc-editor.org/rfc/rfc9728  @see https://www.rfc-editor.org/rfc/rfc8414
 */
import * as oauth from 'oauth4webapi';
import { PlatError } from '../errors.js';
import { isSecureOrLoopback } from './base-url.js';
import { MAX_OAUTH_BODY_BYTES, SPEC_PATHS } from './endpoints.js';
import { sanitize } from '../terminal/text.js';
import { parseBearerChallenge } from './www-authenticate.js';
import { bodyFailure, toPlatError } from './errors.js';
import type { OAuthDeps } from './options.js';

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

/**
 * `resourceMetadata`: where the API's protected-resource document is when no well-known address has it (given with
 * plat login --resource-metadata, or named by a 401 of the API plat remembered); asked first.
 */
export async function discover(deps: OAuthDeps, baseUrl: string, now: number, options: { resourceMetadata?: string } = {}): Promise<Discovery> {
  const base = new URL(baseUrl);
  const tried: Tried[] = [];
  const resource = await discoverResource(deps, base, tried, options.resourceMetadata);
  const issuer = chooseIssuer(resource, baseUrl);
  // A document plat was told of and could not use: the error lists why, not only the metadata addresses' 404s.
  const as = await discoverAuthorizationServer(deps, new URL(issuer), tried, {
    listAll: Boolean(options.resourceMetadata) && !resource,
    // An API that names no authorization server is its own: with a path, the origin's root metadata is its
    // (the 2025-03-26 MCP servers' layout), after the addresses with the path.
    originRoot: issuer === baseUrl && hasPath(base),
  });
  const filledFromSpec = fillFromSpec(as, baseUrl);
  return { baseUrl, issuer: as.issuer, resource, as, filledFromSpec, fetchedAt: now };
}

/** One address discovery asked, and what it answered: for the error that says where plat looked. */
interface Tried {
  url: string;
  answer: string;
}

/** A document discovery could not use from one address: the next address is tried. */
class NotThere extends Error {
  constructor(readonly answer: string) {
    super(answer);
  }
}

/**
 * RFC 9728: the protected-resource metadata names the API's authorization server. Looked for where the API
 * publishes it: the well-known address with the base URL's path (§3.1), then, for a base URL with a path, the
 * origin's own document (one for the whole origin, or a path the base URL is under), then the `resource_metadata` of
 * a 401 or 403 from the API itself (§5.1). Any 4xx, 5xx or non-JSON answer moves on; a document for another API is
 * never used (§3.3). An API that publishes none is its own authorization server (the platform's layout).
 */
async function discoverResource(deps: OAuthDeps, base: URL, tried: Tried[], named?: string): Promise<oauth.ResourceServer | undefined> {
  const step = "reading the API's protected-resource metadata";
  if (named) {
    const address = new URL(named);
    // As for a 401's resource_metadata: TLS, or loopback; never an http document for an https API.
    if (!isSecureOrLoopback(address) || (address.protocol === 'http:' && base.protocol === 'https:')) {
      tried.push({ url: address.href, answer: 'not https://' });
    } else {
      const given = await tryDocument(deps, step, address, tried, (response) => readResource(response, base));
      if (given) return given;
    }
  }
  const found = await tryDocument(deps, step, wellKnown(base, 'oauth-protected-resource', 'inserted'), tried, (response) => readResource(response, base));
  if (found) return found;
  if (hasPath(base)) {
    // A base URL with a path (https://host/mcp) on a server that publishes one document for its whole origin: its
    // `resource` is the origin, or a path the base URL is under (never another origin's).
    const root = await tryDocument(deps, step, wellKnown(new URL(base.origin), 'oauth-protected-resource', 'inserted'), tried, (response) =>
      readResource(response, base, 'prefix'),
    );
    if (root) return root;
  }
  const linked = await resourceMetadataLink(deps, base, tried);
  return linked ? tryDocument(deps, step, linked, tried, (response) => readResource(response, base)) : undefined;
}

/** One address: its document, or undefined (and what it answered, in `tried`) when plat should look elsewhere. */
async function tryDocument<T>(
  deps: OAuthDeps,
  step: string,
  address: URL,
  tried: Tried[],
  read: (response: Response) => Promise<T>,
): Promise<T | undefined> {
  let url = address.href;
  let response: Response | undefined;
  try {
    response = await getJson(deps, address);
    const slashed = slashRedirect(address, response);
    if (slashed) {
      await response.body?.cancel();
      url = slashed.href;
      response = await getJson(deps, slashed);
    }
    // Any other redirect is not followed (a metadata document moved elsewhere could name any endpoints): this
    // address does not have it, and the next one is asked.
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new NotThere(redirectAnswer(response, slashed ?? address));
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new NotThere(`HTTP ${response.status}`);
    }
    return await read(response);
  } catch (error) {
    if (error instanceof NotThere) {
      tried.push({ url, answer: error.answer });
      return undefined;
    }
    if (error instanceof oauth.OperationProcessingError && isUnusableDocument(error)) {
      const type = response?.headers.get('content-type')?.split(';')[0]?.trim();
      const answer =
        error.code === oauth.RESPONSE_IS_NOT_JSON ? `not JSON${type ? `: ${sanitize(type, 60)}` : ''}` : error.code === oauth.PARSE_ERROR ? 'JSON that cannot be parsed' : 'not a metadata document';
      tried.push({ url, answer });
      return undefined;
    }
    // Metadata for another issuer is refused by the caller in its own words, never skipped.
    if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON) throw error;
    const broken = bodyFailure(error, address.origin);
    if (broken) throw broken;
    throw toPlatError(error, step, address.origin);
  }
}

/**
 * The one redirect discovery follows: on the same origin, to the same address with only a `/` appended (Django's
 * APPEND_SLASH answers `/.well-known/openid-configuration` with a 301 to the slash form, where django-oauth-toolkit
 * serves it). Followed once; what it serves is still bound to its issuer by the metadata's own check.
 */
function slashRedirect(address: URL, response: Response): URL | undefined {
  if (response.status < 300 || response.status >= 400 || address.pathname.endsWith('/')) return undefined;
  const target = redirectTarget(address, response);
  if (!target || target.origin !== address.origin || target.search !== address.search) return undefined;
  return target.pathname === `${address.pathname}/` ? target : undefined;
}

function redirectTarget(address: URL, response: Response): URL | undefined {
  const location = response.headers.get('location');
  if (!location) return undefined;
  try {
    return new URL(location, address);
  } catch {
    return undefined;
  }
}

/** What a redirect is recorded as, in the list of addresses tried: where it pointed, never followed. */
function redirectAnswer(response: Response, address: URL): string {
  const target = redirectTarget(address, response);
  return target ? `HTTP ${response.status}, redirected to ${sanitize(target.href, 200)}` : `HTTP ${response.status}, a redirect without a usable Location`;
}

/** The document itself was wrong (not JSON, not an object, a required member missing): not a network failure. */
function isUnusableDocument(error: oauth.OperationProcessingError): boolean {
  if (error.code === oauth.JSON_ATTRIBUTE_COMPARISON) return false; // another issuer: refused, never skipped
  if (error.code === oauth.RESPONSE_IS_NOT_JSON || error.code === oauth.PARSE_ERROR) {
    // A body that broke off (or Ctrl-C) is a network failure, reported as one.
    const cause = error.cause as { name?: string } | undefined;
    return !(cause instanceof Error) || cause.name === 'SyntaxError' || error.code === oauth.RESPONSE_IS_NOT_JSON;
  }
  return error.code === oauth.INVALID_RESPONSE || error.code === oauth.RESPONSE_IS_NOT_CONFORM;
}

/**
 * RFC 9728 §3.3: the document must be for this API (the same URL, a trailing slash aside); `prefix`, for the
 * origin's own document: for this API or a path it is under, on the same origin.
 */
async function readResource(response: Response, base: URL, match: 'same' | 'prefix' = 'same'): Promise<oauth.ResourceServer> {
  const text = await response.text();
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    const type = response.headers.get('content-type')?.split(';')[0]?.trim();
    throw new NotThere(`not JSON${type ? `: ${sanitize(type, 60)}` : ''}`);
  }
  if (!document || typeof document !== 'object' || Array.isArray(document) || typeof (document as { resource?: unknown }).resource !== 'string') {
    throw new NotThere('not a protected-resource metadata document (no "resource")');
  }
  const resource = (document as { resource: string }).resource;
  if (!sameResource(resource, base, match)) throw new NotThere(`a document for another API (${sanitize(resource, 120)})`);
  return document as oauth.ResourceServer;
}

function sameResource(resource: string, base: URL, match: 'same' | 'prefix'): boolean {
  try {
    const url = new URL(resource);
    const trim = (path: string) => path.replace(/\/+$/, '');
    if (url.origin !== base.origin) return false;
    if (match === 'prefix' && url.search === '') {
      const own = trim(url.pathname);
      return own === '' || trim(base.pathname) === own || base.pathname.startsWith(`${own}/`);
    }
    return trim(url.pathname) === trim(base.pathname) && url.search === base.search;
  } catch {
    return false;
  }
}

function hasPath(url: URL): boolean {
  return url.pathname !== '/' && url.pathname !== '';
}

/**
 * RFC 9728 §5.1: an API answers a request without a token with 401 (or 403) and a Bearer challenge whose
 * resource_metadata names its document. Asked only when no well-known address had it; an https document for an
 * http API is fine, the reverse is not.
 */
async function resourceMetadataLink(deps: OAuthDeps, base: URL, tried: Tried[]): Promise<URL | undefined> {
  let response: Response;
  try {
    response = await deps.fetch(base.href, { method: 'GET', headers: { accept: 'application/json' }, redirect: 'manual', maxBodyBytes: MAX_OAUTH_BODY_BYTES });
  } catch (error) {
    throw toPlatError(error, "reading the API's protected-resource metadata", base.origin);
  }
  await response.body?.cancel().catch(() => {});
  const challenge = response.status === 401 || response.status === 403 ? parseBearerChallenge(response.headers.get('www-authenticate')) : undefined;
  if (!challenge?.resourceMetadata) {
    tried.push({ url: base.href, answer: `HTTP ${response.status} without a resource_metadata challenge` });
    return undefined;
  }
  let link: URL;
  try {
    link = new URL(challenge.resourceMetadata, base);
  } catch {
    tried.push({ url: base.href, answer: 'a resource_metadata that is not a URL' });
    return undefined;
  }
  if (!isSecureOrLoopback(link) || (link.protocol === 'http:' && base.protocol === 'https:')) {
    tried.push({ url: base.href, answer: `a resource_metadata that is not https:// (${sanitize(link.origin, 120)})` });
    return undefined;
  }
  return link;
}

/** A well-known address: RFC 8615's, with the URL's path after it (RFC 8414 §3.1, RFC 9728 §3.1) or before it (OIDC Discovery §4). */
function wellKnown(url: URL, name: string, path: 'inserted' | 'appended'): URL {
  const own = url.pathname.replace(/\/+$/, '');
  return new URL(path === 'inserted' ? `/.well-known/${name}${own}` : `${own}/.well-known/${name}`, url);
}

function getJson(deps: OAuthDeps, url: URL): Promise<Response> {
  return deps.fetch(url.href, { method: 'GET', headers: { accept: 'application/json' }, redirect: 'manual', maxBodyBytes: MAX_OAUTH_BODY_BYTES });
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
    throw new PlatError(`The API names an authorization server that is not https:// (${url.origin}); plat refuses to use it (RFC 8414 §2 and RFC 9728 §7.1 ask for TLS). Report it to the platform.`);
  }
  return issuer;
}

/**
 * RFC 8414 metadata at the issuer's well-known address (path inserted), then OpenID discovery (path appended, as
 * OIDC Discovery §4 has it, then inserted, as some servers publish it). A 4xx, 5xx or non-JSON answer moves on to
 * the next address; metadata that names another issuer stops discovery at once (RFC 8414 §3.3).
 */
async function discoverAuthorizationServer(
  deps: OAuthDeps,
  issuer: URL,
  tried: Tried[],
  options: { listAll?: boolean; originRoot?: boolean } = {},
): Promise<oauth.AuthorizationServer> {
  const { listAll = false } = options;
  const step = 'reading the authorization server metadata';
  const addresses: Array<{ url: URL; issuer: URL }> = [
    { url: wellKnown(issuer, 'oauth-authorization-server', 'inserted'), issuer },
    { url: wellKnown(issuer, 'openid-configuration', 'appended'), issuer },
  ];
  if (hasPath(issuer)) addresses.push({ url: wellKnown(issuer, 'openid-configuration', 'inserted'), issuer });
  if (options.originRoot) {
    // The origin's own metadata names the origin as its issuer (RFC 8414 §3.3 still holds it to that).
    const origin = new URL(issuer.origin);
    addresses.push({ url: wellKnown(origin, 'oauth-authorization-server', 'inserted'), issuer: origin }, { url: wellKnown(origin, 'openid-configuration', 'appended'), issuer: origin });
  }
  const first = tried.length;
  for (const { url, issuer: expected } of addresses) {
    try {
      const found = await tryDocument(deps, step, url, tried, (response) => oauth.processDiscoveryResponse(expected, response));
      if (found) return found;
    } catch (error) {
      if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
        throw new PlatError(
          `The authorization server metadata at ${issuer.origin} names a different issuer than the one it is served for; plat will not trust it (RFC 8414 §3.3 requires them to be identical, so that no server can speak for another). Check the base URL; if it is right, report it to the platform.`,
          undefined,
          { cause: error },
        );
      }
      throw error;
    }
  }
  const own = tried.slice(first);
  // Neither metadata document exists: a wrong address (often a base URL with a path the platform does not
  // have), not a server having a bad day.
  if (!listAll && own.every((t) => t.answer === 'HTTP 404')) throw noMetadataError(issuer);
  throw new PlatError(
    `plat found no usable sign-in metadata for ${issuer.href.replace(/\/$/, '')}. It asked: ${tried.map((t) => `${sanitize(t.url, 200)} (${t.answer})`).join('; ')}. ` +
      'Check the base URL (plat discover --base-url <url> shows what an address publishes), or try again later if the server is having trouble.',
  );
}

function noMetadataError(issuer: URL): PlatError {
  const address = issuer.href.replace(/\/$/, '');
  return new PlatError(
    `There is no platform at ${address}: it publishes no sign-in metadata (HTTP 404 for its OAuth and OpenID Connect discovery documents). ` +
      (hasPath(issuer)
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

