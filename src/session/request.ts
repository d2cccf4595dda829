/**
 * STAND-IN for the lead's authenticated-request path (same interface as /work/prompts/api.md); replaced by main's
 * src/session/request.ts at merge. Only what pagination needs: origin rule, token refresh, 401 replay, 429/503.
 */
import type { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { AuthError, ExitCode, PlatError, ScopeError } from '../errors.js';
import type { HttpResponse } from '../http.js';
import { parseBearerChallenge } from '../oauth/www-authenticate.js';
import type { Profile } from '../store/types.js';
import { getAccessToken, needsRefresh, type TokenSource } from './access.js';
import { loadProfile, resolveBaseUrl } from './profile.js';

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
  const origin = baseUrl ? new URL(baseUrl).origin : undefined;
  let noted = false;
  let cached: TokenSource | undefined;
  return {
    baseUrl,
    profile,
    async send(request) {
      const http = await ctx.http();
      let source: TokenSource | undefined;
      if (options.auth !== 'anonymous' && request.url.origin === origin) {
        // One read of the store per client, not per request (a paginated call sends thousands), until it is due.
        if (!cached || (cached.kind === 'session' && needsRefresh(cached.session, ctx.now()))) {
          cached = await getAccessToken(ctx, { optional: true, profile });
        }
        source = cached;
      } else if (options.auth !== 'anonymous' && !noted) {
        noted = true;
        ctx.io.note(`${request.url.origin} is not the platform's origin: calling it without your token.`);
      }
      const once = (token?: string) =>
        http.request({
          method: request.method,
          url: request.url,
          headers: { ...request.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: request.body?.(),
          signal: request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined,
        });
      for (let attempt = 0; ; attempt++) {
        let response = await once(source?.token);
        if (response.status === 401 && source?.kind === 'session') {
          response.body.destroy();
          source = cached = await getAccessToken(ctx, { force: true });
          response = await once(source.token);
        }
        if ((response.status === 429 || response.status === 503) && attempt < (request.retries ?? 2)) {
          const after = Number(response.headers['retry-after'] ?? 1);
          response.body.destroy();
          ctx.io.note(`HTTP ${response.status}: retrying in ${after} s`);
          await new Promise((resolve) => setTimeout(resolve, Math.min(after, 30) * 1000));
          continue;
        }
        return Object.assign(response, { token: source });
      }
    },
  };
}

export function responseError(request: ApiRequest, response: ApiResponse): PlatError | undefined {
  if (response.status < 400) return undefined;
  const where = `${request.method} ${request.url.pathname}`;
  const raw = response.headers['www-authenticate'];
  const challenge = parseBearerChallenge(Array.isArray(raw) ? raw.join(', ') : raw);
  if (response.status === 403 && challenge?.error === 'insufficient_scope') {
    return new ScopeError(`${where} needs the scope "${challenge.scope}". Run: plat login --add-scope ${challenge.scope}`);
  }
  if (response.status === 401) return new AuthError(`${where} needs you to be signed in (HTTP 401). Run plat login.`);
  return new PlatError(`HTTP ${response.status} ${response.statusText}: ${where}`, ExitCode.failure);
}
