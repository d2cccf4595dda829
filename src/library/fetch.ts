/**
 * `client.fetch`: a standard Request in, a standard Response out, with the session's authenticated-request path
 * (token on the session's origin only, refresh before expiry, one refresh and replay on 401) in between.
 */
import { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { AuthError, ScopeError, UsageError } from '../errors.js';
import { openApiClient, type ApiRequest, type ApiResponse } from '../session/request.js';
import { responseError } from '../session/response-error.js';

/** A path is resolved against the base URL as `plat call` resolves it; an absolute http(s) URL is used as is. */
export function resolveTarget(target: string | URL, baseUrl: string | undefined): URL {
  if (target instanceof URL) return new URL(target.href);
  if (/^https?:\/\//i.test(target)) {
    try {
      return new URL(target);
    } catch {
      throw new UsageError(`"${target}" is not a valid URL.`);
    }
  }
  if (!baseUrl) throw new UsageError('No platform to call: log in with plat login, or pass baseUrl to createClient (or set PLAT_BASE_URL).');
  return new URL(`${baseUrl}${target.startsWith('/') ? target : `/${target}`}`);
}

export async function libraryFetch(ctx: Context, target: string | URL, init: RequestInit = {}): Promise<Response> {
  const api = await openApiClient(ctx, { auth: 'required' });
  const url = resolveTarget(target, api.baseUrl);
  // The Fetch API's own normalisation of every kind of body (string, bytes, Blob, FormData, URLSearchParams,
  // streams) and of headers; buffered once, so a 401 can be replayed with the same bytes.
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
  const failure = responseError(ctx, request, response);
  // Statuses are the caller's to read, as with fetch, except the two that say the session itself falls short
  // (only when the session's token went with the request: another origin's 401 is that origin's answer).
  if (response.token && (failure instanceof AuthError || failure instanceof ScopeError)) {
    response.body.destroy();
    throw failure;
  }
  return toResponse(response, normal.method);
}

function toResponse(response: ApiResponse, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const empty = method === 'HEAD' || response.status === 204 || response.status === 205 || response.status === 304;
  if (empty) response.body.resume();
  return new Response(empty ? null : (Readable.toWeb(response.body) as unknown as ReadableStream<Uint8Array>), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
