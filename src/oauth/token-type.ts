/**
 * A token response without `token_type`, read as Bearer. RFC 6749 §5.1 requires the member and oauth4webapi refuses
 * a response without it (it offers a hook only for types that are present); OpenAuth omits it. Go's x/oauth2 reads
 * an absent type as Bearer, and so does plat: it only ever sends the access token as a Bearer token to the API's
 * own origin, so nothing rides on the member. A type that is present and not Bearer is still refused (toSession),
 * and every other check of the response stays oauth4webapi's.
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1
 */
import type { OAuthDeps } from './options.js';

export async function bearerWhenUntyped(deps: OAuthDeps, response: Response): Promise<Response> {
  if (response.status !== 200) return response;
  let body: unknown;
  try {
    body = JSON.parse(await response.clone().text());
  } catch {
    return response; // not JSON, or a body that broke off: oauth4webapi reports it in its own words
  }
  if (!body || typeof body !== 'object' || Array.isArray(body) || !('access_token' in body) || 'token_type' in body) return response;
  deps.note?.("The server's token response has no token_type (RFC 6749 §5.1 requires one); plat reads it as Bearer, as it sends every token.");
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify({ ...body, token_type: 'Bearer' }), { status: response.status, statusText: response.statusText, headers });
}

/**
 * A token response refused after the server answered 200: the code (or device code) is spent and the server has
 * issued tokens, a refresh token among them perhaps, that plat never stored and so cannot revoke.
 */
export const HELD_BY_SERVER =
  'The server may now hold a session for plat that plat could not store, and so cannot revoke: it ends when the server lets it expire, or when you remove plat\'s access in your account on the server.';
