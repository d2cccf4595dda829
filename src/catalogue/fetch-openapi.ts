/**
 * Fetching the platform's `/openapi.json` (no token: the spec publishes it openly) into the cached index that
 * `plat op`, `plat call`'s check, `plat scopes plan` and the completions read.
 *
 * The cache is used while it is younger than API_TTL_MS (an hour); after that, or with `--refresh`, plat asks again
 * with If-None-Match when the server gave an ETag (a 304 only renews the copy). A document that cannot be read,
 * parsed or understood never replaces a good copy: an explicit `--refresh` fails and says the copy was kept; an
 * automatic refresh warns and goes on with the copy.
 */
import type { Context } from '../context.js';
import { ExitCode, InterruptedError, PlatError } from '../errors.js';
import { bodyReadError } from '../http/body-error.js';
import { sanitize } from '../terminal/text.js';
import { API_TTL_MS, buildIndex, OPENAPI_PATH, readCachedFullIndex, readCachedIndex, writeCachedIndex, type ApiIndex, type FullApiIndex } from './openapi.js';

/** An API description is bigger than OAuth metadata, but a document past this is broken or hostile. */
const MAX_OPENAPI_BYTES = 10 * 1024 * 1024;

export interface GetApiIndexOptions {
  /** Fetch now, whatever the copy's age (`--refresh`); a failure is then an error even with a copy at hand. */
  refresh?: boolean;
}

/** The index `plat op` calls from: with every operation's parameters, body schema and description. */
export async function getFullApiIndex(ctx: Context, baseUrl: string, options: GetApiIndexOptions = {}): Promise<FullApiIndex> {
  return (await getIndex(ctx, baseUrl, options, true)) as FullApiIndex;
}

/** The index listings, plans and checks read. */
export async function getApiIndex(ctx: Context, baseUrl: string, options: GetApiIndexOptions = {}): Promise<ApiIndex> {
  return getIndex(ctx, baseUrl, options, false);
}

async function getIndex(ctx: Context, baseUrl: string, options: GetApiIndexOptions, full: boolean): Promise<ApiIndex> {
  // Without its details (lost, or from another download) a copy is no copy for plat op: it downloads again.
  const cached = full
    ? await readCachedFullIndex(ctx.configDir, baseUrl, ctx.now(), Infinity)
    : await readCachedIndex(ctx.configDir, baseUrl, ctx.now(), Infinity);
  if (cached && !options.refresh && ctx.now() - cached.fetchedAt <= API_TTL_MS) return cached;
  try {
    return await download(ctx, baseUrl, cached);
  } catch (error) {
    if (!cached || error instanceof InterruptedError) throw error;
    const why = error instanceof PlatError ? error.message : 'it could not be read.';
    if (options.refresh) {
      throw new PlatError(`${why} plat kept the copy it had (from ${new Date(cached.fetchedAt).toISOString()}).`, ExitCode.failure, { cause: error });
    }
    ctx.io.warn(`${why} Using the copy from ${new Date(cached.fetchedAt).toISOString()}.`);
    return cached;
  }
}

async function download(ctx: Context, baseUrl: string, cached: ApiIndex | undefined): Promise<ApiIndex> {
  const source = `${baseUrl}${OPENAPI_PATH}`;
  const http = await ctx.http();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (cached?.etag) headers['if-none-match'] = cached.etag;
  const response = await http.fetch(source, { headers, maxBodyBytes: MAX_OPENAPI_BYTES });
  if (response.status === 304 && cached) {
    await response.body?.cancel().catch(() => undefined);
    const renewed = { ...cached, fetchedAt: ctx.now() };
    await writeCachedIndex(ctx.configDir, renewed);
    return renewed;
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    const why = response.status === 404 ? 'the platform publishes no API description there' : sanitize(`HTTP ${response.status} ${response.statusText}`, 100);
    throw new PlatError(`Could not read ${source}: ${why}.`, ExitCode.failure);
  }
  let body: string;
  try {
    body = await response.text();
  } catch (error) {
    throw bodyReadError(error, new URL(source));
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (error) {
    throw new PlatError(`${source} is not JSON, so plat cannot read the API's operations from it.`, ExitCode.failure, { cause: error });
  }
  let index: FullApiIndex;
  try {
    index = buildIndex(doc, baseUrl, source, ctx.now());
  } catch (error) {
    throw new PlatError(`${source} is not an OpenAPI document (${(error as Error).message}).`, ExitCode.failure, { cause: error });
  }
  const etag = response.headers.get('etag');
  // A strong or weak validator, bounded; anything else is not worth sending back.
  if (etag && /^(W\/)?"[\x21\x23-\x7e]{0,200}"$/.test(etag)) index.etag = etag;
  await writeCachedIndex(ctx.configDir, index);
  return index;
}
