/**
 * `plat proxy [--port N | --socket PATH] [--allow-write]`: serves the session's platform at a local address
 * (src/proxy/) until Ctrl-C, for any HTTP tool. stdout gets one line, `PLAT_PROXY_URL='…'`, for eval; everything
 * else (notes, the access log with --verbose) goes to stderr.
 */
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { startProxy } from '../proxy/server.js';
import { keepYoungGenerationSmall } from '../proxy/young-generation.js';
import { currentProfile, heldScopes, requirePlatform, suggest } from '../session/index.js';

export interface ProxyFlags {
  port?: string;
  socket?: string;
  allowWrite?: boolean;
}

/** --port as given: 0 (any free port) to 65535. */
function proxyPort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port > 65_535) throw new UsageError(`--port must be a port number from 0 to 65535, 0 for any free one (got "${value}").`);
  return port;
}

export async function run(ctx: Context, flags: ProxyFlags): Promise<void> {
  if (flags.port !== undefined && flags.socket !== undefined) throw new UsageError('Choose one of --port and --socket: the proxy listens on one of them.');
  if (flags.socket === '') throw new UsageError('--socket needs a path for the unix socket (it must not exist yet).');
  const port = proxyPort(flags.port);
  const profile = await currentProfile(ctx);
  const platform = requirePlatform(ctx, profile);
  // Said once at the start, and the proxy starts anyway: each request answers 401 until a login, which it picks up.
  if (!heldScopes(ctx, profile, platform).session && !ctx.env.PLAT_TOKEN?.trim()) {
    ctx.io.note(`Not signed in for this platform: requests get 401 until you run ${suggest(ctx, ['login'])}, which the proxy picks up without a restart.`);
  }
  // One line per request is the proxy's --verbose (the access log), not the HTTP client's trace of every header.
  const log = ctx.globals.verbose;
  ctx.globals.verbose = false;
  keepYoungGenerationSmall();
  const proxy = await startProxy(ctx, { port, socket: flags.socket, allowWrite: flags.allowWrite === true, log });
  ctx.io.out(`${proxy.assignments}\n`);
  ctx.io.note(`plat proxy serves ${platform}${flags.allowWrite ? '' : ' (read-only)'} at ${proxy.socket ?? proxy.url.replace(/\/[^/]+\/$/, '/…/')}; Ctrl-C ends it.`);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // Requests in flight end with the interrupt (the HTTP client aborts them): their connections close, none hangs.
  await proxy.close({ graceMs: 1_000 });
}
