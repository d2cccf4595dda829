/**
 * `client.proxy({ port })`: plat proxy's server (src/proxy/) in a program, for a test suite or an SDK that takes a
 * base URL: it calls `url`, and the session's token is added on the way, as for the command.
 */
import type * as Public from './public.js';
import { UsageError } from '../errors.js';
import { startProxy } from '../proxy/server.js';
import { libraryContext, type LibrarySettings } from './context.js';

export async function libraryProxy(settings: LibrarySettings, options: Public.ProxyOptions = {}): Promise<Public.LocalProxy> {
  const port = options.port ?? 0;
  if (!(Number.isSafeInteger(port) && port >= 0 && port <= 65_535)) throw new UsageError(`port must be a port number from 0 to 65535, 0 for any free one (got ${String(options.port)}).`);
  // Its own signal, aborted by close(): requests still in flight then end with the proxy.
  const lifetime = new AbortController();
  const ctx = libraryContext(settings, lifetime.signal);
  // PLAT_DEBUG gives the proxy's access log (a line per request), not the HTTP client's trace of every header.
  const log = ctx.globals.verbose;
  ctx.globals.verbose = false;
  const proxy = await startProxy(ctx, { port, allowWrite: options.allowWrite === true, log });
  let closed: Promise<void> | undefined;
  return {
    url: proxy.url,
    close: () =>
      (closed ??= (async () => {
        await proxy.close();
        lifetime.abort();
        await ctx.dispose();
      })()),
  };
}
