/**
 * The Node library: `import { createClient } from 'plat-cli'`. Built as its own ESM entry (dist/library/) over
 * the session layer, so a program shares the stored session, refresh lock, origin rule and errors of the command,
 * and loads none of the command line (commander, chalk, ora). Its public types are public.d.ts.
 */
import type * as Public from './public.js';
import { AuthError, NetworkError, PlatError, ScopeError, UsageError } from '../errors.js';
import { accessToken, apiUrl, itemsPath, nextPageHint, openClient, pageItems, type ApiRequest } from '../session/index.js';
import { batch as batchRequests } from './batch.js';
import { libraryContext, librarySettings, type LibrarySettings } from './context.js';
import { libraryFetch } from './fetch.js';
import { libraryProxy } from './proxy.js';
import { scrubbedError, scrubbingErrors } from './scrub.js';

export { AuthError, NetworkError, PlatError, ScopeError, UsageError };

/** A week, as `plat token --min-ttl`'s bound. */
const MAX_MIN_TTL_SECONDS = 7 * 86_400;

export const createClient: typeof Public.createClient = (options = {}) => {
  const settings = librarySettings(options);
  return {
    profile: settings.profile,
    fetch: async (path, init) => {
      const signal = init?.signal ?? undefined;
      try {
        return await libraryFetch(libraryContext(settings, signal), path, init);
      } catch (error) {
        // As the global fetch does: an abort rejects with the signal's reason (an AbortError by default).
        if (signal?.aborted) throw signal.reason;
        throw scrubbedError(settings.secrets, error);
      }
    },
    token: (tokenOptions) => token(settings, tokenOptions).catch((error: unknown) => Promise.reject(scrubbedError(settings.secrets, error))),
    paginate: (path, paginateOptions) => scrubbingErrors(settings.secrets, paginate(settings, path, paginateOptions)),
    batch: (requests, batchOptions) => scrubbingErrors(settings.secrets, batchRequests(settings, requests, batchOptions)),
    proxy: (proxyOptions) => libraryProxy(settings, proxyOptions).catch((error: unknown) => Promise.reject(scrubbedError(settings.secrets, error))),
  };
};

/** The client's token, as `plat token` hands it out (refreshed first when it expires within minTtl seconds). */
async function token(settings: LibrarySettings, tokenOptions: Public.TokenOptions = {}): Promise<Public.TokenInfo> {
  const ctx = libraryContext(settings);
  const minTtl = tokenOptions.minTtl;
  if (minTtl !== undefined && !(Number.isFinite(minTtl) && minTtl > 0 && minTtl <= MAX_MIN_TTL_SECONDS)) {
    throw new UsageError(`minTtl must be a number of seconds from 1 to ${MAX_MIN_TTL_SECONDS} (got ${String(minTtl)}).`);
  }
  const source = await accessToken(ctx, { minTtlMs: minTtl === undefined ? undefined : Math.ceil(minTtl * 1000) });
  if (source.kind === 'env') {
    return { accessToken: source.token, tokenType: 'Bearer', expiresAt: null, scopes: null, profile: null, baseUrl: source.baseUrl ?? null };
  }
  const { session, profile } = source;
  return {
    accessToken: source.token,
    tokenType: session.tokenType || 'Bearer',
    expiresAt: session.expiresAt === undefined ? null : new Date(session.expiresAt),
    scopes: [...session.scopes],
    profile: profile.name,
    baseUrl: profile.baseUrl ?? null,
  };
}

/** `plat call --paginate`'s pages (the session's pageItems), item by item: one page is held at a time. */
async function* paginate<T>(settings: LibrarySettings, path: string, options: Public.PaginateOptions = {}): AsyncIterableIterator<T> {
  const limit = (value: number | undefined, name: string) => {
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) throw new UsageError(`${name} must be a whole number of at least 1 (got ${String(value)}).`);
    return value;
  };
  const maxPages = limit(options.maxPages, 'maxPages');
  const maxItems = limit(options.maxItems, 'maxItems');
  const items = options.items === undefined ? undefined : itemsPath(options.items, 'items');
  const next = options.next === undefined ? undefined : nextPageHint(options.next);
  const ctx = libraryContext(settings);
  const api = await openClient(ctx, { auth: 'required' });
  const request: ApiRequest = { method: 'GET', url: apiUrl(path, api.baseUrl, 'log in with plat login, or pass baseUrl to createClient (or set PLAT_BASE_URL)'), headers: { accept: 'application/json' } };
  yield* pageItems(ctx, api, request, { maxPages, maxItems, items, next }) as AsyncIterable<T>;
}

// The exported classes are the ones public.d.ts describes (checked here, by the compiler).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const classesMatch: [
  Same<PlatError['exitCode'] extends number ? true : false, true>,
  InstanceType<typeof AuthError> extends Public.AuthError ? true : false,
  InstanceType<typeof ScopeError> extends Public.ScopeError ? true : false,
  InstanceType<typeof NetworkError> extends Public.NetworkError ? true : false,
  InstanceType<typeof UsageError> extends Public.UsageError ? true : false,
] = [true, true, true, true, true];
void classesMatch;
