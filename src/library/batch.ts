/**
 * client.batch(): the engine under `plat batch` (batch/engine.ts) for a program: requests from any (async)
 * iterable, N at a time over the client's one session, one governor for the server's pauses, results yielded as
 * they complete (or in order). The requests are read lazily, so a generator of a million lines stays flat. Each is
 * built as plat batch builds a line (requests/batch-line.ts): a raw request, or `{op, params, body}` checked
 * against the platform's API description, read (as plat op reads it) on the first op request only.
 */
import type * as Public from './public.js';
import { UsageError } from '../errors.js';
import type { Context } from '../context.js';
import type { FullApiIndex } from '../catalogue/openapi.js';
import { prepareObject, type LineContext } from '../requests/batch-line.js';
import { problemPhrase, type RequestProblem } from '../requests/request-object.js';
import { startBatch, type BatchItem } from '../batch/index.js';
import { openClient } from '../session/index.js';
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

  const context = lineContext(ctx, api.baseUrl);
  async function* items(): AsyncGenerator<BatchItem> {
    let position = 0;
    for await (const request of requests) {
      position++;
      yield await toItem(request, position, context);
    }
  }

  const run = await startBatch(ctx, api, items(), { concurrency, ratePerSecond: rate, ordered: options.ordered, failFast: options.failFast });
  // The engine's results are the public shape (public.d.ts): yielded as they are, so the compiler holds the two alike.
  yield* run.results;
  if (run.sessionEnded) throw run.sessionEnded;
}

const NO_PLATFORM = 'log in with plat login, or pass baseUrl to createClient (or set PLAT_BASE_URL)';

/** The platform and, for op requests, its API description: read once per batch, on the first op request. */
function lineContext(ctx: Context, baseUrl: string | undefined): LineContext {
  let index: Promise<FullApiIndex> | undefined;
  return {
    baseUrl,
    noBaseUrl: NO_PLATFORM,
    index: () => {
      if (!baseUrl) return Promise.reject(new UsageError(`An op request needs the platform: ${NO_PLATFORM}.`));
      index ??= import('../catalogue/fetch-openapi.js').then(({ getFullApiIndex }) => getFullApiIndex(ctx, baseUrl));
      return index;
    },
  };
}

/** A request as plat batch's line is built (requests/batch-line.ts), its problems in the library's words. */
async function toItem(request: Public.BatchRequest, position: number, context: LineContext): Promise<BatchItem> {
  const where = `request ${position}`;
  const prepared = await prepareObject(request, context, (problem) => new UsageError(libraryWords(problem, where)));
  return { line: position, id: prepared.id ?? position, request: prepared.request };
}

function libraryWords(problem: RequestProblem, where: string): string {
  switch (problem.kind) {
    case 'not-object':
      return `${where} is not an object.`;
    case 'members': {
      const { extra, op } = problem;
      const takes = op ? 'an op request takes id, op, params, body' : 'a request takes id, method, path, query, headers, body; or id, op, params, body';
      return `${where}: unknown member${extra.length > 1 ? 's' : ''} ${extra.map((k) => JSON.stringify(k)).join(', ')} (${takes}).`;
    }
    case 'method':
      return `${where}: method must be an HTTP method such as "GET" (or give op for an operation).`;
    case 'path':
      return `${where}: path must be a string such as "/api/courses".`;
    case 'query':
      return `${where}: query must be an object of names and values.`;
    case 'headers':
      return `${where}: headers must be an object of header names and values.`;
    case 'header-value':
      return `${where}: headers[${JSON.stringify(problem.name)}] must be a string.`;
    case 'header-refused':
      return `${where}: headers cannot set ${problem.name}: ${problem.reason}.`;
    case 'url':
      // No platform to resolve against is the client's, not this request's.
      return problem.message;
    default:
      return `${where}: ${problemPhrase(problem)}.`;
  }
}
