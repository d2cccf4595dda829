/**
 * What plat requires of an authorization server, checked without a protocol library: the platform's documented
 * paths, PKCE support, that an endpoint plat is about to send credentials to is https (or loopback), and how large
 * a body it may send. Kept apart from discovery.ts and options.ts so the token path (whoami, call), which reads
 * UserInfo with plat's own request, does not load oauth4webapi to use them (test/repo/layers.test.ts holds it).
 */
import type { AuthorizationServer } from 'oauth4webapi';
import { PlatError } from '../errors.js';
import { isSecureOrLoopback } from './base-url.js';

/** The platform's documented paths (platform-auth.md §4), used only where metadata is silent. */
export const SPEC_PATHS = {
  authorization_endpoint: '/oauth/authorize',
  token_endpoint: '/api/oauth/token',
  registration_endpoint: '/api/oauth/register',
  userinfo_endpoint: '/api/oauth/userinfo',
  revocation_endpoint: '/api/oauth/revoke',
} as const;

/**
 * OAuth documents and token responses are small; a server that streams megabytes at us is broken or hostile. Every
 * body plat reads from an authorization server (metadata, registration, tokens, UserInfo) is cut off here.
 */
export const MAX_OAUTH_BODY_BYTES = 1024 * 1024;

/**
 * PKCE S256 is mandatory: a server that lists code_challenge_methods_supported without S256 is refused before
 * anything is registered or opened; one that lists nothing is used with S256.
 */
export function assertS256(as: AuthorizationServer): void {
  const methods = as.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    throw new PlatError(
      `The authorization server does not support PKCE with S256 (it offers: ${methods.join(', ') || 'none'}). plat requires S256 to keep the login safe, so it stopped before opening anything.`,
    );
  }
}

/**
 * The endpoint, if plat may send credentials to it: https, or plain http only when the issuer itself is plain http
 * on loopback (a local test server). An https issuer never sends plat to plain http, not even on loopback, where
 * any local process could be listening.
 */
export function assertSecureEndpoint(as: AuthorizationServer, name: keyof typeof SPEC_PATHS | 'device_authorization_endpoint'): URL {
  const value = (as as unknown as Record<string, unknown>)[name];
  if (value === undefined || value === null) {
    throw new EndpointMissingError(as.issuer, name);
  }
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new PlatError(`The authorization server metadata has an invalid ${name}.`);
  }
  if (!isSecureOrLoopback(url) || (url.protocol === 'http:' && !isLoopbackHttp(as.issuer))) {
    throw new PlatError(`The authorization server's ${name} is not https:// (${url.origin}); plat refuses to use it.`);
  }
  return url;
}

function isLoopbackHttp(issuer: string): boolean {
  try {
    const url = new URL(issuer);
    return url.protocol === 'http:' && isSecureOrLoopback(url);
  } catch {
    return false;
  }
}

/** The metadata names no such endpoint (RFC 8414 §2: optional ones may be absent); callers say what that means. */
class EndpointMissingError extends PlatError {
  readonly endpoint: string;
  constructor(issuer: string, endpoint: string) {
    super(`The authorization server ${issuer} offers no ${endpoint} in its metadata, so plat cannot use it for that.`);
    this.name = 'EndpointMissingError';
    this.endpoint = endpoint;
  }
}
