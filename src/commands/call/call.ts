/**
 * `plat call`: one request through the session's authenticated-request path, its body streamed to stdout
 * unmodified (pretty JSON only on a TTY). Token choice, the origin rule, refresh and retries live in
 * session/request.ts; this file parses flags and renders.
 */
import { Readable } from 'node:stream';
import type { Context } from '../../context.js';
import { ScopeError } from '../../errors.js';
import { bodyReadError } from '../../http/body-error.js';
import { openClient, responseFailure, suggest, type ApiClient, type ApiResponse } from '../../session/index.js';
import { escapeJsonForTerminal, sanitize } from '../../terminal/text.js';
import { assertRegularFile, prepareRequest, toApiRequest, type CallFlags, type PreparedRequest } from '../../requests/prepare.js';


/**
 * True in dist/plain-call.cjs, whose form has no flags (src/dispatch.ts): esbuild folds the constant and leaves what
 * only a flag runs (json.ts: --jq, --paginate and the other JSON outputs, with jq and paging) out of that bundle,
 * 15 % of the text a plain call reads and pages in at every start. Undeclared elsewhere.
 */
declare const PLAT_PLAIN_BUNDLE: boolean;

const PRETTY_LIMIT = 8 * 1024 * 1024;

/** Flags that read the response as JSON instead of streaming it (json.ts). */
const JSON_OUTPUT_FLAGS = ['paginate', 'ndjson', 'slurp', 'maxPages', 'maxItems', 'items', 'next', 'jq'] as const;

export async function run(ctx: Context, method: string, target: string, flags: CallFlags): Promise<void> {
  if (!(typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE) && JSON_OUTPUT_FLAGS.some((flag) => flags[flag] !== undefined)) {
    const json = await import('./json.js');
    return json.run(ctx, method, target, flags);
  }
  const client = await openClient(ctx, { auth: flags.anonymous ? 'anonymous' : 'auto' });
  const request = await prepareRequest(
    { method, target, headers: flags.header ?? [], fields: flags.field ?? [], typedFields: flags.typedField ?? [], input: flags.input },
    client.baseUrl,
    () => readAll(ctx.io.stdin),
  );
  await runPrepared(ctx, client, request, flags);
}

/** The rest of `plat call` once the request is built; `plat op` builds its request from the document and ends here. */
export async function runPrepared(ctx: Context, client: ApiClient, request: PreparedRequest, flags: CallFlags): Promise<void> {
  if (!(typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE) && JSON_OUTPUT_FLAGS.some((flag) => flags[flag] !== undefined)) {
    const json = await import('./json.js');
    return json.runPrepared(ctx, client, request, flags);
  }
  const { baseUrl } = client;
  if (request.inputFrom && request.inputFrom !== '-') await assertRegularFile(request.inputFrom, '--input');
  // The cached /openapi.json (from `plat op`), if any: warn about unknown paths and scopes the session lacks.
  let shortfall: Awaited<ReturnType<typeof import('../../catalogue/call-check.js').checkCall>>;
  if (request.sameOrigin) {
    const { checkCall } = await import('../../catalogue/call-check.js');
    shortfall = await checkCall(ctx, { ...request, baseUrl, profile: flags.anonymous ? undefined : client.profile });
  }
  const apiRequest = toApiRequest(ctx, request, flags);
  // At a terminal, a 403 for a scope the session lacks may be stepped up (a body read from stdin is spent: that
  // refusal stands, exit 5); a "no" leaves the refusal, its body printed as it came.
  const response = await client.send(apiRequest, { stepUp: {} });
  await render(ctx, request, response, Boolean(flags.include), Boolean(flags.silent));
  const outcome = responseFailure(ctx, apiRequest, response);
  // One message per fact: the scope the description names is said only when the refusal did not name one.
  if (shortfall && outcome && !(outcome instanceof ScopeError)) ctx.io.warn(scopeHint(ctx, shortfall, client.profile.loginMethod === 'device'));
  if (outcome) throw outcome;
}

function scopeHint(ctx: Context, { operation, missing }: { operation: string; missing: string[] }, device: boolean): string {
  const plural = missing.length > 1 ? 's' : '';
  const login = suggest(ctx, ['login', ...missing.flatMap((scope) => ['--add-scope', scope])], { device });
  return `The platform's API description says ${operation} needs the scope${plural} ${missing.join(' ')}, which this session lacks. To add ${plural ? 'them' : 'it'}: ${login}`;
}




function header(response: ApiResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

async function render(ctx: Context, request: PreparedRequest, response: ApiResponse, include: boolean, silent: boolean): Promise<void> {
  const { io } = ctx;
  if (include) {
    // The head is plat's own rendering of server-supplied text, so it is sanitised, and scrubbed of the session's
    // secrets (a header that echoes the token back, a Location carrying it); the body is data, byte-exact.
    let head = `HTTP/1.1 ${response.status} ${sanitize(response.statusText, 80)}\n`;
    for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
      head += `${sanitize(response.rawHeaders[i]!, 200).toLowerCase()}: ${sanitize(response.rawHeaders[i + 1]!, 0)}\n`;
    }
    io.out(`${ctx.secrets.scrub(head)}\n`);
  }
  if (request.method === 'HEAD') {
    response.body.resume();
    return;
  }
  const type = header(response, 'content-type') ?? '';
  const length = Number(header(response, 'content-length') ?? NaN);
  try {
    if (silent) {
      // plat api --silent, as gh's: read to the end (a body that breaks off is still an error), print nothing.
      for await (const _chunk of response.body as Readable);
      return;
    }
    let body: Readable = response.body as Readable;
    if (io.stdoutIsTTY && /\bjson\b/.test(type) && !(length > PRETTY_LIMIT)) {
      // Pretty only up to PRETTY_LIMIT, announced or not: a body without Content-Length is read that far and no
      // further, then goes out as it came (the part read first, then the rest, streamed).
      const head = await readUpTo(response.body, PRETTY_LIMIT);
      if (!head.more) {
        const text = Buffer.concat(head.chunks).toString('utf8');
        try {
          io.out(`${escapeJsonForTerminal(JSON.stringify(JSON.parse(text), null, 2))}\n`);
        } catch {
          io.out(text);
        }
        return;
      }
      body = Readable.from(head.all());
    }
    // Straight through with backpressure: memory stays flat whatever the size.
    await (await import('../../terminal/stream-out.js')).streamToStdout(body, io.stdout);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return; // `plat call … | head` is fine
    // Ctrl-C and the deadline end the body on purpose: say which, rather than that the server broke off.
    throw bodyReadError(error, request.url, { interrupted: ctx.signal.aborted, onTimeout: 'Raise --timeout if it needs longer.' });
  }
}

/** The body's first chunks up to `limit` bytes; `more` when it goes on, and `all()` then yields it whole, in order. */
async function readUpTo(stream: NodeJS.ReadableStream, limit: number) {
  const iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let size = 0;
  let more = false;
  while (size <= limit) {
    const next = await iterator.next();
    if (next.done) break;
    chunks.push(Buffer.from(next.value));
    size += next.value.length;
    more = size > limit;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* chunks.splice(0);
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield Buffer.from(next.value);
    }
  }
  return { chunks, more, all };
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

