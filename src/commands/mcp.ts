/**
 * `plat mcp`: the platform's API for AI agents, as a Model Context Protocol server on stdin/stdout (the MCP
 * TypeScript SDK, mcp-sdk.ts; this command and the SDK are a bundle of their own, mcp-load.ts). The tools (mcp-tools.ts) come from the platform's API
 * description and act as the person signed in to the profile, within the scopes they granted; each call goes
 * through the session's one authenticated path (mcp-call.ts). The server never opens a browser, never signs in and
 * never steps up: a tool that needs that says which command the person must run.
 *
 * stdout belongs to the protocol: nothing else is written there. Notes and warnings go to stderr, which hosts keep
 * as the server's log. The server ends quietly when the host closes stdin (or its stdout), and survives any tool's
 * failure: each is a tool error.
 */
import { getFullApiIndex } from '../catalogue/fetch-openapi.js';
import { API_TTL_MS, type FullApiIndex } from '../catalogue/openapi.js';
import type { Context } from '../context.js';
import { PlatError } from '../errors.js';
import { currentProfile, grantedScopes, requirePlatform } from '../session/index.js';
import { sanitize } from '../text.js';
import { errorResult, runTool } from './mcp-call.js';
import { startStdioServer } from './mcp-sdk.js';
import { buildTools, listed, selectOperations, type Tool } from './mcp-tools.js';

export interface McpFlags {
  for?: string[];
  allowWrite?: boolean;
}

export async function run(ctx: Context, flags: McpFlags): Promise<void> {
  const allowWrite = Boolean(flags.allowWrite);
  const only = flags.for?.flatMap((word) => word.split(/[\s,]+/)).filter(Boolean);
  const profile = await currentProfile(ctx);
  const baseUrl = requirePlatform(ctx, profile);
  // Read before the server starts: a platform without an API description, or a --for naming nothing, is said once on
  // stderr with the contract's exit code instead of as a server that offers nothing.
  let index = await getFullApiIndex(ctx, baseUrl);
  selectOperations(index, { allowWrite, only });

  if (ctx.io.stdinIsTTY) {
    // Someone ran it by hand: it waits for an agent host's JSON-RPC, which is not typed at a terminal.
    ctx.io.note('plat mcp serves the Model Context Protocol on stdin/stdout for an agent host, which starts it itself: plat mcp --help shows how to configure one. Ctrl-C ends it.');
  }
  let indexCheckedAt = ctx.now();
  const said = new Set<string>();
  const warnOnce = (text: string) => {
    if (said.has(text)) return;
    said.add(text);
    ctx.io.warn(text);
  };
  /** The tools as of now: the API description and the scopes the session holds now. */
  const currentTools = async (): Promise<Tool[]> => {
    // The description is asked for again once its copy is an hour old (API_TTL_MS), and then at most once an hour
    // while the platform cannot give it: a tool call never waits on a download that failed a minute ago.
    if (ctx.now() - indexCheckedAt > API_TTL_MS) {
      indexCheckedAt = ctx.now();
      index = await refreshedIndex(ctx, baseUrl, index);
    }
    return buildTools(ctx, index, { allowWrite, only, held: await heldScopes(ctx), device: profile.loginMethod === 'device', warn: warnOnce });
  };
  const callTool = async (name: string, args: Record<string, unknown>) => {
    try {
      // As of now, not as of the last tools/list: a scope the person added since (plat login --add-scope) counts.
      const tool = (await currentTools()).find((t) => t.name === name);
      if (!tool) return errorResult(ctx, new PlatError(`There is no tool "${sanitize(name, 64)}": tools/list names them.`));
      return await runTool(ctx, tool, args);
    } catch (error) {
      return errorResult(ctx, error);
    }
  };

  // Requests being answered: a host that writes its last request and closes stdin still gets the answer.
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(answer: Promise<T>): Promise<T> => {
    inFlight.add(answer);
    void answer.finally(() => inFlight.delete(answer)).catch(() => undefined);
    return answer;
  };

  const server = await startStdioServer({
    name: 'plat',
    version: ctx.version,
    instructions:
      `Tools for the platform ${baseUrl} (profile ${profile.name}), acting as the person who signed in with plat and within the scopes they granted. ` +
      (allowWrite ? 'Operations that change data are offered. ' : 'Only reading operations are offered. ') +
      'When a tool says a scope is missing or the session ended, tell the person the plat command it names: plat mcp never signs in by itself.',
    stdin: ctx.io.stdin,
    // stdout belongs to the protocol; io's stdout ends plat quietly when the host closes the pipe (main.ts).
    stdout: ctx.io.stdout,
    listTools: () => track(currentTools().then((list) => list.map(listed))),
    callTool: (name, args) => track(callTool(name, args)),
    onError: (error) => ctx.io.note(`plat mcp: ${ctx.secrets.scrub(sanitize(error?.message ?? error, 300))}`),
  });
  // The host closing stdin is the end of the session (the SDK's transport does not watch for it); so is Ctrl-C.
  await Promise.race([
    server.closed,
    new Promise<void>((resolve) => {
      ctx.io.stdin.once('end', () => resolve());
      ctx.io.stdin.once('close', () => resolve());
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    }),
  ]);
  while (inFlight.size > 0 && !ctx.signal.aborted) await Promise.race([Promise.allSettled([...inFlight]), aborted(ctx.signal)]);
  // The SDK writes an answer a tick after its handler settles.
  await new Promise((resolve) => setImmediate(resolve));
  await server.close().catch(() => undefined);
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

async function refreshedIndex(ctx: Context, baseUrl: string, index: FullApiIndex): Promise<FullApiIndex> {
  try {
    return await getFullApiIndex(ctx, baseUrl);
  } catch {
    // getFullApiIndex keeps and warns about a copy it has; with none at all the one read at start serves
    return index;
  }
}

/** The scopes the session holds, for marking what it cannot call; undefined when plat cannot know (PLAT_TOKEN). */
async function heldScopes(ctx: Context): Promise<readonly string[] | undefined> {
  try {
    return await grantedScopes(ctx);
  } catch {
    return undefined;
  }
}
