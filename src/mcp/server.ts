/**
 * `plat mcp`: the platform's API for AI agents, as a Model Context Protocol server on stdin/stdout (the MCP
 * TypeScript SDK, sdk.ts; this command and the SDK are a bundle of their own, load.ts). The tools (tools.ts) come from the platform's API
 * description and act as the person signed in to the profile, within the scopes they granted; each call goes
 * through the session's one authenticated path (call.ts). The server never opens a browser, never signs in and
 * never steps up: a tool that needs that says which command the person must run.
 *
 * stdout belongs to the protocol: nothing else is written there. Notes and warnings go to stderr, which hosts keep
 * as the server's log. The server ends quietly when the host closes stdin (or its stdout), and survives any tool's
 * failure: each is a tool error.
 */
import { getFullApiIndex } from '../catalogue/fetch-openapi.js';
import { API_TTL_MS, OPENAPI_PATH, type FullApiIndex } from '../catalogue/openapi.js';
import type { Context } from '../context.js';
import { NetworkError, PlatError, UsageError } from '../errors.js';
import { parsePositiveInt } from '../requests/values.js';
import { governRequests } from '../batch/index.js';
import { currentProfile, heldScopes, platformOf, suggest } from '../session/index.js';
import { sanitize } from '../terminal/text.js';
import { errorResult, runTool } from './call.js';
import { forTheHost } from './host.js';
import { startStdioServer, type RunningServer } from './sdk.js';
import { buildTools, listed, selectOperations, WHOAMI, whoamiTool, type Tool } from './tools.js';

export interface McpFlags {
  for?: string[];
  allowWrite?: boolean;
  concurrency?: string;
}

/** Requests at the platform at once, by default: an agent in a loop must not flood the person's school. */
const DEFAULT_CONCURRENCY = 8;
/** The most --concurrency allows. */
const MAX_CONCURRENCY = 64;
/** While calls keep waiting, the host's log hears of their number at most this often. */
const QUEUE_NOTE_EVERY_MS = 5_000;

export async function run(ctx: Context, flags: McpFlags): Promise<void> {
  // stdin is the protocol's, and plat mcp never signs in by itself: no step-up question, even at a terminal.
  ctx.globals.prompt = false;
  const concurrency = parsePositiveInt(flags.concurrency, '--concurrency', MAX_CONCURRENCY) ?? DEFAULT_CONCURRENCY;
  const allowWrite = Boolean(flags.allowWrite);
  const only = flags.for?.flatMap((word) => word.split(/[\s,]+/)).filter(Boolean);
  const profile = await currentProfile(ctx);
  const baseUrl = platformOf(ctx, profile);
  const said = new Set<string>();
  const warnOnce = (text: string) => {
    if (said.has(text)) return;
    said.add(text);
    ctx.io.warn(text);
  };
  const noteOnce = (text: string) => {
    if (said.has(text)) return;
    said.add(text);
    ctx.io.note(text);
  };
  // Read before the server starts when the platform is known: a platform without an API description, or a --for
  // naming nothing, is said once on stderr with the contract's exit code instead of as a server that offers nothing.
  // Before any login names a platform, or while the platform cannot be reached, the server starts all the same (a
  // host shows "connection closed" for a server that ends before its handshake, and the agent could tell the person
  // nothing): whoami says what to run, and a tool that needs the description says what could not be reached.
  let index: FullApiIndex | undefined;
  /** Why the description could not be read, the last time it was asked for (a tool error says it). */
  let unreadable: string | undefined;
  if (baseUrl) {
    try {
      index = await getFullApiIndex(ctx, baseUrl);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      unreadable = unreachableSentence(ctx, baseUrl, error);
      noteOnce(`plat mcp: ${unreadable}`);
    }
  }
  if (index) selectOperations(index, { allowWrite, only });

  if (ctx.io.stdinIsTTY) {
    // Someone ran it by hand: it waits for an agent host's JSON-RPC, which is not typed at a terminal.
    ctx.io.note('plat mcp serves the Model Context Protocol on stdin/stdout for an agent host, which starts it itself: plat mcp --help shows how to configure one. Ctrl-C ends it.');
  }
  if (!heldScopes(ctx, profile, baseUrl).session && !ctx.env.PLAT_TOKEN?.trim()) {
    // For the host's log: the tools will say it too, each time.
    const login = suggest(ctx, ['login', ...(profile.baseUrl || !baseUrl ? [] : ['--base-url', baseUrl])]);
    ctx.io.note(`plat mcp: profile ${profile.name} is not signed in${baseUrl ? ` to ${baseUrl}` : ''}; tools that need a session answer with what to run until the person runs ${login}${baseUrl ? '' : ' --base-url <url>'} (plat mcp never signs in by itself).`);
  }
  let indexCheckedAt = ctx.now();
  // One pace for every tool call, as plat batch's lines share one: at most `concurrency` at the platform, the rest in
  // order, and a 429/503's Retry-After holding them all. Both waits are said in the host's log.
  const queueNotes = queueNoter(ctx, () => pace.governor.waiting, concurrency);
  const pace = await governRequests(ctx, {
    maxInFlight: concurrency,
    onPause: (ms, status) => ctx.io.note(`plat mcp: the platform asked to wait ${Math.round(ms / 100) / 10} s${status ? ` (HTTP ${status})` : ''}; every call waits until then.`),
    onQueue: () => queueNotes.changed(),
  });
  let server: RunningServer | undefined;
  // Tools are built once for a session and its description, not per request: a login, a scope added or a new
  // platform (read from the profile, never from the keychain) builds them again, and tells the client they changed.
  let built: { key: string; tools: Tool[] } | undefined;
  let indexVersion = 0;
  let reading: Promise<{ index?: FullApiIndex; failure?: string; unreachable?: boolean }> | undefined;
  const currentTools = async (): Promise<Tool[]> => {
    const now = await currentProfile(ctx);
    const platform = platformOf(ctx, now);
    if (platform && (!index || index.baseUrl !== platform)) {
      // One read at a time, however many calls ask meanwhile; again at the next call while it fails.
      reading ??= firstIndex(ctx, platform).finally(() => (reading = undefined));
      const read = await reading;
      index = read.index;
      unreadable = read.failure;
      if (read.failure) (read.unreachable ? noteOnce : warnOnce)(read.unreachable ? `plat mcp: ${read.failure}` : read.failure);
      indexCheckedAt = ctx.now();
      indexVersion++;
    } else if (index && ctx.now() - indexCheckedAt > API_TTL_MS) {
      // The description is asked for again once its copy is an hour old (API_TTL_MS), and then at most once an hour
      // while the platform cannot give it: a tool call never waits on a download that failed a minute ago.
      indexCheckedAt = ctx.now();
      index = await refreshedIndex(ctx, index.baseUrl, index);
      indexVersion++;
    }
    const held = heldScopes(ctx, now, platform);
    // Marked as lacking only where plat knows what the session holds (not with PLAT_TOKEN, not before a login).
    const scopes = held.session ? held.scopes : undefined;
    const key = JSON.stringify([index?.baseUrl ?? null, indexVersion, scopes ?? null]);
    if (built?.key === key) return built.tools;
    const tools = toolsFor(ctx, index, { allowWrite, only, held: scopes, device: now?.loginMethod === 'device', warn: warnOnce });
    const changed = built !== undefined && JSON.stringify(built.tools.map(listed)) !== JSON.stringify(tools.map(listed));
    built = { key, tools };
    if (changed) server?.toolsChanged();
    return tools;
  };
  const failed = (error: unknown) => {
    const said = forTheHost(error);
    // The host's log says it too: a person reading it learns what to run without asking the agent.
    if (said instanceof PlatError && said.exitCode === 4) noteOnce(`plat mcp: ${ctx.secrets.scrub(sanitize(said.message, 600))}`);
    return said;
  };
  const callTool = async (name: string, args: Record<string, unknown>, signal: AbortSignal) => {
    let release: () => void;
    try {
      // A place among the calls at the platform (--concurrency), in order; a call cancelled meanwhile leaves the queue.
      release = await pace.governor.admit(signal);
    } catch {
      return errorResult(ctx, new PlatError('The call was cancelled before it reached the platform.'));
    }
    try {
      // As of now, not as of the last tools/list: a scope the person added since (plat login --add-scope) counts.
      const tool = (await currentTools()).find((t) => t.name === name);
      if (!tool && !index && unreadable) return errorResult(ctx, new PlatError(`${sanitize(name, 64)} is not offered now: ${unreadable}`));
      if (!tool) return errorResult(ctx, new PlatError(`There is no tool "${sanitize(name, 64)}": tools/list names them.`));
      return await runTool(ctx, tool, args, signal, failed, pace);
    } catch (error) {
      return errorResult(ctx, failed(error));
    } finally {
      release();
    }
  };

  // Requests being answered: a host that writes its last request and closes stdin still gets the answer.
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(answer: Promise<T>): Promise<T> => {
    inFlight.add(answer);
    void answer.finally(() => inFlight.delete(answer)).catch(() => undefined);
    return answer;
  };

  let transportFailure: Error | undefined;
  server = await startStdioServer({
    name: 'plat',
    version: ctx.version,
    instructions: instructionsFor(baseUrl, profile.name, allowWrite, only),
    stdin: ctx.io.stdin,
    // stdout belongs to the protocol; io's stdout ends plat quietly when the host closes the pipe (main.ts).
    stdout: ctx.io.stdout,
    listTools: () => track(currentTools().then((list) => list.map(listed))),
    callTool: (name, args, signal) => track(callTool(name, args, signal)),
    onError: (error) => {
      // stdin itself failing is the end of the session, and not a quiet one.
      if (typeof (error as NodeJS.ErrnoException)?.code === 'string') transportFailure = error;
      ctx.io.note(`plat mcp: ${ctx.secrets.scrub(sanitize(error?.message ?? error, 300))}`);
    },
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
  const stopped = aborted(ctx.signal);
  while (inFlight.size > 0 && !ctx.signal.aborted) await Promise.race([Promise.allSettled([...inFlight]), stopped]);
  // The SDK writes an answer a tick after its handler settles.
  await new Promise((resolve) => setImmediate(resolve));
  await server.close().catch(() => undefined);
  if (transportFailure) throw new PlatError(`plat mcp stopped: reading from the host failed (${sanitize(transportFailure.message, 200)}).`);
}

/**
 * The host's log on the calls waiting for a place: a line when a queue forms (written a turn later, so a burst of
 * calls is counted whole, as far as it has arrived), its size again at most every QUEUE_NOTE_EVERY_MS while it
 * changes, and a line when it is empty again. A change that came too soon after the last line is said when the
 * interval is up: a burst that arrives over a few reads of stdin ("1 call waiting", then 290 more) is not left at
 * its first count while the rest wait.
 */
function queueNoter(ctx: Context, waiting: () => number, concurrency: number): { changed(): void } {
  let said = 0;
  let saidAt = -Infinity;
  let due = false;
  let catchUp: NodeJS.Timeout | undefined;
  const say = () => {
    due = false;
    const count = waiting();
    if (count === said) return;
    clearTimeout(catchUp);
    catchUp = undefined;
    if (count === 0) {
      said = 0;
      ctx.io.note(`plat mcp: no call waits now (at most ${concurrency} at the platform at once).`);
      return;
    }
    const since = ctx.now() - saidAt;
    if (said > 0 && since < QUEUE_NOTE_EVERY_MS) {
      // Unref'd: a server whose host has gone does not stay for a log line.
      catchUp = setTimeout(say, QUEUE_NOTE_EVERY_MS - since).unref();
      return;
    }
    said = count;
    saidAt = ctx.now();
    ctx.io.note(`plat mcp: ${count} call${count === 1 ? '' : 's'} waiting (at most ${concurrency} at the platform at once; --concurrency sets it).`);
  };
  return {
    changed() {
      if (due) return;
      due = true;
      setImmediate(say);
    },
  };
}

/** The tools for a description (or, before any platform is known, whoami alone). */
function toolsFor(ctx: Context, index: FullApiIndex | undefined, options: Parameters<typeof buildTools>[2]): Tool[] {
  const whoamiOnly = () => (!options.only?.length || options.only.includes(WHOAMI) ? [whoamiTool(WHOAMI, undefined)] : []);
  // Before any platform is known, --for or not: whoami is the one tool that can tell the person what to run.
  if (!index) return [whoamiTool(WHOAMI, undefined)];
  try {
    return buildTools(ctx, index, options);
  } catch (error) {
    // A --for name the platform, known only since a login made while the server ran, does not have.
    if (!(error instanceof UsageError)) throw error;
    (options.warn ?? ctx.io.warn)(error.message);
    return whoamiOnly();
  }
}

/** What the client's model is told the server is for (MCP's `instructions`, read once at the handshake). */
function instructionsFor(baseUrl: string | undefined, profile: string, allowWrite: boolean, only: string[] | undefined): string {
  return [
    baseUrl
      ? `Tools for the platform ${baseUrl} (profile ${profile}), acting as the person who signed in with plat and within the scopes they granted.`
      : `Tools for the platform profile ${profile} signs in to: no one has signed in yet, so only whoami is offered, and it says the plat login to run; the platform's tools follow the login.`,
    allowWrite ? 'Operations that change data are offered.' : 'Only reading operations are offered.',
    only?.length
      ? `This server offers exactly the operations it was started with (${only.map((name) => sanitize(name, 64)).join(', ')}): no other path of the platform can be called.`
      : 'Besides one tool per operation, call reaches any other path of the platform.',
    'When a tool says a scope is missing or the session ended, tell the person the plat command it names: plat mcp never signs in by itself.',
  ].join(' ');
}

/**
 * The description of a platform not read yet: first known after start (a login made while the server runs), or
 * unreachable until now. A failure is returned for the host's log and the tool error.
 */
async function firstIndex(ctx: Context, baseUrl: string): Promise<{ index?: FullApiIndex; failure?: string; unreachable?: boolean }> {
  try {
    return { index: await getFullApiIndex(ctx, baseUrl) };
  } catch (error) {
    if (error instanceof NetworkError) return { failure: unreachableSentence(ctx, baseUrl, error), unreachable: true };
    const failure = error instanceof PlatError ? error.message : `plat mcp could not read the API description of ${baseUrl}.`;
    return { failure: ctx.secrets.scrub(sanitize(failure, 400)) };
  }
}

/** What could not be reached, and what happens next: for the host's log and the tool error alike. */
function unreachableSentence(ctx: Context, baseUrl: string, error: NetworkError): string {
  const why = ctx.secrets.scrub(sanitize(error.message, 300)).replace(/\s*$/, '');
  return `the platform's API description, ${sanitize(`${baseUrl}${OPENAPI_PATH}`, 300)}, could not be read: ${why} plat mcp reads it again at the next call, and its tools come then (the client is told the tools changed).`;
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
