/**
 * `client.fetch`: a standard Request in, a standard Response out, with the session's authenticated-request path
 * (token on the session's origin only, refresh before expiry, one refresh and replay on 401) in between.
 */
import type { Context } from '../context.js';
import { AuthError, ScopeError, UsageError } from '../errors.js';
import { headerKey, refusedHeader } from '../http/header-rule.js';
import { toWebResponse } from '../http/index.js';
import { apiUrl, openClient, responseFailure, type ApiRequest } from '../session/index.js';


export async function libraryFetch(ctx: Context, target: string | URL, init: RequestInit = {}): Promise<Response> {
  const api = await openClient(ctx, { auth: 'required' });
  const url = apiUrl(target, api.baseUrl, 'log in with plat login, or pass baseUrl to createClient (or set PLAT_BASE_URL)');
  // The Fetch API's own normalisation of every kind of body (string, bytes, Blob, FormData, URLSearchParams,
  // streams) and of headers; buffered once, so a 401 can be replayed with the same bytes.
  // The header rule (http/header-rule.ts) before the Fetch API sees the names: it refuses "Authorization " outright as a
  // TypeError of its own, which says less than plat's sentence.
  const towardPlatform = api.baseUrl !== undefined && url.origin === new URL(api.baseUrl).origin;
  for (const name of headerNames(init.headers)) {
    const refused = refusedHeader(name, towardPlatform);
    if (refused) throw new UsageError(`init.headers cannot set ${headerKey(name)}: ${refused}.`);
  }
  const normal = new Request(url, { ...init, redirect: 'manual' });
  const bytes = normal.body ? new Uint8Array(await normal.arrayBuffer()) : undefined;
  const headers: Record<string, string> = {};
  normal.headers.forEach((value, name) => {
    headers[name] = value;
  });
  // A Request always carries these defaults; only what the caller set is sent.
  if (!new Headers(init.headers).has('accept')) delete headers.accept;
  const request: ApiRequest = { method: normal.method, url, headers, body: () => bytes };
  const response = await api.send(request);
  const failure = responseFailure(ctx, request, response);
  // Statuses are the caller's to read, as with fetch, except the two that say the session itself falls short
  // (only when the session's token went with the request: another origin's 401 is that origin's answer).
  if (response.token && (failure instanceof AuthError || failure instanceof ScopeError)) {
    response.body.destroy();
    throw failure;
  }
  return toWebResponse(response, normal.method);
}


/**
 * The names in any form RequestInit's headers take (a Headers, pairs, a record, or any iterable of pairs such as a
 * Map, which fetch accepts too), as the caller spelt them.
 */
function headerNames(headers: RequestInit['headers']): string[] {
  if (!headers) return [];
  if (headers instanceof Headers) return [...headers.keys()];
  if (Array.isArray(headers)) return headers.map((pair) => String(pair[0]));
  const iterable = headers as { [Symbol.iterator]?: unknown; next?: unknown };
  if (typeof iterable[Symbol.iterator] === 'function') {
    // A one-shot iterator (a generator) read here would reach fetch empty: the sender's own check holds it instead.
    if (typeof iterable.next === 'function') return [];
    return [...(headers as unknown as Iterable<[unknown, unknown]>)].map((pair) => String(pair[0]));
  }
  return Object.keys(headers);
}
