/**
 * Fetching the platform's `/openapi.json` (no token: the spec publishes it openly) into the cached index that
 * `plat api`, `plat call`'s check and the completions read.
 */
import type { Context } from '../context.js';
import { ExitCode, PlatError } from '../errors.js';
import { bodyReadError } from '../http/body-error.js';
import { API_TTL_MS, buildIndex, OPENAPI_PATH, readCachedIndex, writeCachedIndex, type ApiIndex } from './openapi.js';

/** An API description is bigger than OAuth metadata, but a document past this is broken or hostile. */
export const MAX_OPENAPI_BYTES = 10 * 1024 * 1024;

export async function getApiIndex(ctx: Context, baseUrl: string, options: { refresh?: boolean } = {}): Promise<ApiIndex> {
  if (!options.refresh) {
    const cached = await readCachedIndex(ctx.configDir, baseUrl, ctx.now(), API_TTL_MS);
    if (cached) return cached;
  }
  const source = `${baseUrl}${OPENAPI_PATH}`;
  const http = await ctx.http();
  const response = await http.fetch(source, { headers: { accept: 'application/json' }, maxBodyBytes: MAX_OPENAPI_BYTES });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    const why = response.status === 404 ? 'the platform publishes no API description there' : `HTTP ${response.status} ${response.statusText}`.trim();
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
  let index: ApiIndex;
  try {
    index = buildIndex(doc, baseUrl, source, ctx.now());
  } catch (error) {
    throw new PlatError(`${source} is not an OpenAPI document (${(error as Error).message}).`, ExitCode.failure, { cause: error });
  }
  await writeCachedIndex(ctx.configDir, index);
  return index;
}
