/**
 * client.batch(): the engine under `plat batch` (batch/engine.ts) for a program: requests from any (async)
 * iterable, N at a time over the client's one session, one governor for the server's pauses, results yielded as
 * they complete (or in order). The requests are read lazily, so a generator of a million lines stays flat.
 */
import type * as Public from './public.js';
import { UsageError } from '../errors.js';
import { headerKey, refusedHeader } from '../http/header-rule.js';
import { appendQuery, type FieldTree } from '../requests/fields.js';
import { apiUrl, openClient, startBatch, type BatchItem } from '../session/index.js';
import { libraryContext, type LibrarySettings } from './context.js';

export async function* batch(
  settings: LibrarySettings,
  requests: Iterable<Public.BatchRequest> | AsyncIterable<Public.BatchRequest>,
  options: Public.BatchOptions = {},
): AsyncIterableIterator<Public.BatchResult> {
  const concurrency = options.concurrency ?? 4;
  if (!(Number.isSafeInteger(concurrency) && concurrency >= 1 && concurrency <= 256)) throw new UsageError(`concurrency must be a whole number from 1 to 256 (got ${String(options.concurrency)}).`);
  const rate = options.ratePerSecond;
  if (rate !== undefined && !(Number.isFinite(rate) && rate > 0)) throw new UsageError(`ratePerSecond must be a positive number (got ${String(rate)}).`);
  const ctx = libraryContext(settings, options.signal ?? undefined);
  const api = await openClient(ctx, { auth: 'auto' });

  async function* items(): AsyncGenerator<BatchItem> {
    let position = 0;
    for await (const request of requests) {
      position++;
      yield toItem(request, position, api.baseUrl);
    }
  }

  const run = await startBatch(ctx, api, items(), { concurrency, ratePerSecond: rate, ordered: options.ordered, failFast: options.failFast });
  // The engine's results are the public shape (public.d.ts): yielded as they are, so the compiler holds the two alike.
  yield* run.results;
  if (run.sessionEnded) throw run.sessionEnded;
}

function toItem(request: Public.BatchRequest, position: number, baseUrl: string | undefined): BatchItem {
  const where = `request ${position}`;
  if (request === null || typeof request !== 'object') throw new UsageError(`${where} is not an object.`);
  const { method, path, query, headers, body, id } = request;
  if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method)) throw new UsageError(`${where}: method must be an HTTP method such as "GET".`);
  if (typeof path !== 'string' || path === '') throw new UsageError(`${where}: path must be a string such as "/api/courses".`);
  const url = apiUrl(path, baseUrl, 'log in with plat login, or pass baseUrl to createClient (or set PLAT_BASE_URL)');
  if (query !== undefined && query !== null && (typeof query !== 'object' || Array.isArray(query))) {
    throw new UsageError(`${where}: query must be an object of names and values.`);
  }
  // As plat batch's lines: a list repeats its name, an object's members are name[member], anything else is refused.
  appendQuery(url.searchParams, (query ?? {}) as FieldTree, 'repeat', (name) => `${where}: query ${JSON.stringify(name)}`);
  const sent: Record<string, string> = Object.create(null);
  const towardPlatform = baseUrl !== undefined && url.origin === new URL(baseUrl).origin;
  for (const [name, value] of Object.entries(headers ?? {})) {
    const refused = refusedHeader(name, towardPlatform);
    if (refused) throw new UsageError(`${where}: headers cannot set ${headerKey(name)}: ${refused}.`);
    sent[headerKey(name)] = String(value);
  }
  sent.accept ??= 'application/json, */*;q=0.8';
  let text: string | undefined;
  if (body !== undefined) {
    text = typeof body === 'string' && sent['content-type'] !== undefined && !/\bjson\b/i.test(sent['content-type']) ? body : JSON.stringify(body);
    sent['content-type'] ??= 'application/json';
  }
  return { line: position, id: id ?? position, request: { method: method.toUpperCase(), url, headers: sent, body: text === undefined ? undefined : () => text } };
}
