/**
 * Discovery results cached per base URL (which fixes the issuer), so the token path and a second login make no
 * metadata requests while the cache is fresh. A cache that cannot be read is ignored, never fatal.
 */
import { dirname, join } from 'node:path';
import type { Context } from '../../context.js';
import type { Discovery } from '../../oauth/discovery.js';
import { assertTrusted, ensurePrivateDir, readJsonFile, writeFileAtomic } from '../../store/atomic.js';
import { cacheKey } from '../../store/paths.js';

export const DISCOVERY_TTL_MS = 60 * 60 * 1000;

function cachePath(configDir: string, baseUrl: string): string {
  return join(configDir, 'cache', `discovery-${cacheKey(baseUrl)}.json`);
}

/** `maxAgeMs`: how old a cached document may be (default the TTL; completions take any age). */
export async function readCachedDiscovery(
  ctx: Context,
  baseUrl: string,
  options: { maxAgeMs?: number } = {},
): Promise<Discovery | undefined> {
  try {
    // A cache another user could write would let them name the endpoints: it is not read then (assertTrusted throws).
    const file = cachePath(ctx.configDir, baseUrl);
    assertTrusted(dirname(file), 'directory');
    assertTrusted(file, 'file');
    const cached = (await readJsonFile(file)) as Discovery | undefined;
    if (!cached || cached.baseUrl !== baseUrl || typeof cached.fetchedAt !== 'number') return undefined;
    const maxAge = options.maxAgeMs ?? DISCOVERY_TTL_MS;
    if (ctx.now() - cached.fetchedAt > maxAge || cached.fetchedAt > ctx.now() + 60_000) return undefined;
    return cached;
  } catch {
    return undefined;
  }
}

/**
 * Fresh cache, or discover and cache. `refresh` skips the cache (after the server rejected something).
 * `resourceMetadata` (plat login --resource-metadata): the API's protected-resource document is there; it skips
 * the cache, and once it served, it is remembered for every later discovery of this base URL.
 */
export async function getDiscovery(ctx: Context, baseUrl: string, options: { refresh?: boolean; resourceMetadata?: string } = {}): Promise<Discovery> {
  if (!options.refresh && !options.resourceMetadata) {
    const cached = await readCachedDiscovery(ctx, baseUrl);
    if (cached) return cached;
  }
  const http = await ctx.http();
  // The protocol library is loaded only when discovery really happens, not for a cache hit.
  const [{ discover }, hints] = await Promise.all([import('../../oauth/discovery.js'), import('./resource-hint.js')]);
  const resourceMetadata = options.resourceMetadata ?? (await hints.rememberedResourceMetadata(ctx, baseUrl));
  const discovery = await discover({ fetch: http.fetch }, baseUrl, ctx.now(), { resourceMetadata });
  if (options.resourceMetadata && discovery.resource) await hints.rememberResourceMetadata(ctx, baseUrl, options.resourceMetadata);
  if (discovery.filledFromSpec.length > 0 && ctx.globals.verbose) {
    ctx.io.note(`The metadata lacks ${discovery.filledFromSpec.join(', ')}; using the platform's documented paths.`);
  }
  try {
    const file = cachePath(ctx.configDir, baseUrl);
    await ensurePrivateDir(ctx.configDir);
    await ensurePrivateDir(dirname(file));
    await writeFileAtomic(file, JSON.stringify(discovery));
  } catch {
    // A read-only config dir costs the next run a discovery, nothing more.
  }
  return discovery;
}
