import * as oauth from 'oauth4webapi';
import type { Fetch } from '../http/index.js';
import { isLoopbackHost } from './base-url.js';
import { MAX_OAUTH_BODY_BYTES } from './endpoints.js';

export interface OAuthDeps {
  fetch: Fetch;
  /** Where a note for --verbose goes (unset: nowhere); what it says is never a secret. */
  note?: (text: string) => void;
}

/**
 * oauth4webapi's request options: our fetch (timeouts, proxy, tracing, bounded bodies), and plain http allowed
 * only for a loopback URL. Endpoints from metadata pass assertSecureEndpoint first, which also refuses plain http
 * for an https issuer.
 */
export function requestOptions(deps: OAuthDeps, server: string | URL) {
  const url = new URL(String(server));
  return {
    [oauth.customFetch]: (input: string, init: RequestInit) => deps.fetch(input, { ...init, maxBodyBytes: MAX_OAUTH_BODY_BYTES }),
    [oauth.allowInsecureRequests]: url.protocol === 'http:' && isLoopbackHost(url.hostname),
  };
}
