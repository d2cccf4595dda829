// TEMPORARY stand-in for the lead's src/session/request.ts (see the shared interface); deleted once main has it.
import type { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { AuthError, PlatError, ScopeError } from '../errors.js';
import type { HttpResponse } from '../http.js';
import { parseBearerChallenge } from '../oauth/www-authenticate.js';
import { getAccessToken, type TokenSource } from '../session/access.js';
import { loadProfile, resolveBaseUrl } from '../session/profile.js';
import type { Profile } from '../store/types.js';

export type AuthMode = 'auto' | 'anonymous' | 'required';
export interface ApiRequest {
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: () => string | Uint8Array | Readable | undefined;
  replayable?: boolean;
  retries?: number;
  timeoutMs?: number;
}
export interface ApiResponse extends HttpResponse {
  token?: TokenSource;
}
export interface ApiClient {
  readonly baseUrl: string | undefined;
  readonly profile: Profile;
  send(request: ApiRequest): Promise<ApiResponse>;
}

export async function openApiClient(ctx: Context, options: { auth: AuthMode }): Promise<ApiClient> {
  const profile = await loadProfile(ctx);
  const baseUrl = resolveBaseUrl(ctx, profile);
  if (options.auth === 'required') await getAccessToken(ctx, { profile });
  return {
    baseUrl,
    profile,
    async send(request) {
      const http = await ctx.http();
      const sameOrigin = baseUrl !== undefined && request.url.origin === new URL(baseUrl).origin;
      let source: TokenSource | undefined;
      if (sameOrigin && options.auth === 'auto') source = await getAccessToken(ctx, { optional: true, profile });
      if (sameOrigin && options.auth === 'required') source = await getAccessToken(ctx, { profile });
      const attempt = async () =>
        http.request({
          method: request.method,
          url: request.url,
          headers: { ...request.headers, ...(source ? { authorization: `Bearer ${source.token}` } : {}) },
          body: request.body?.(),
        });
      let response = await attempt();
      if (response.status === 401 && source?.kind === 'session' && request.replayable !== false) {
        response.body.destroy();
        source = await getAccessToken(ctx, { force: true, profile });
        response = await attempt();
      }
      return Object.assign(response, { token: source });
    },
  };
}

export function responseError(request: ApiRequest, response: ApiResponse): PlatError | undefined {
  if (response.status < 400) return undefined;
  const header = response.headers['www-authenticate'];
  const challenge = parseBearerChallenge(Array.isArray(header) ? header.join(', ') : header);
  if (response.status === 403 && challenge?.error === 'insufficient_scope') {
    return new ScopeError(`${request.method} ${request.url.pathname} needs the scope "${challenge.scope}". Run: plat login --add-scope ${challenge.scope}`);
  }
  if (response.status === 401) return new AuthError(`The server rejected the token (HTTP 401). Run plat login.`);
  return new PlatError(`HTTP ${response.status}`);
}
