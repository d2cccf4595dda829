/**
 * Where an API keeps its protected-resource document (RFC 9728) when no well-known address has it: named by a 401
 * the API answered to a request plat made without a session (an MCP server that serves only POST, so discovery's
 * GET meets no challenge), or given with plat login --resource-metadata. Kept per base URL, beside the profiles
 * (not in the cache: every later discovery for that base URL needs it, or it would find another issuer), and read
 * by every discovery for that base URL. Not a secret; a file that cannot be read or written costs only the hint.
 */
import { dirname, join } from 'node:path';
import type { Context } from '../../context.js';
import { assertTrusted, ensurePrivateDir, readJsonFile, writeFileAtomic } from '../../store/atomic.js';
import { cacheKey } from '../../store/paths.js';

function hintPath(configDir: string, baseUrl: string): string {
  return join(configDir, 'resource-metadata', `${cacheKey(baseUrl)}.json`);
}

export async function rememberResourceMetadata(ctx: Context, baseUrl: string, address: string): Promise<void> {
  try {
    const file = hintPath(ctx.configDir, baseUrl);
    await ensurePrivateDir(ctx.configDir);
    await ensurePrivateDir(dirname(file));
    await writeFileAtomic(file, JSON.stringify({ baseUrl, address }));
  } catch {
    // A read-only config dir: the login that follows is told the address by hand (--resource-metadata).
  }
}

export async function rememberedResourceMetadata(ctx: Context, baseUrl: string): Promise<string | undefined> {
  try {
    const file = hintPath(ctx.configDir, baseUrl);
    // One another user could write would let them name the document, and so the authorization server.
    assertTrusted(dirname(file), 'directory');
    assertTrusted(file, 'file');
    const hint = (await readJsonFile(file)) as { baseUrl?: unknown; address?: unknown } | undefined;
    return hint?.baseUrl === baseUrl && typeof hint.address === 'string' ? hint.address : undefined;
  } catch {
    return undefined;
  }
}
