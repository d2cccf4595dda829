/**
 * `plat call` when the response is read as JSON rather than streamed through: `--paginate` (every page, printed
 * as one array of items, as NDJSON, or as an array of whole pages) and `--jq`. Parses flags and renders; the
 * paging itself is src/session/paging/paginate.ts, jq is src/terminal/jq.ts.
 *
 * Output on failure part-way: items already printed stay printed, but the array's closing `]` is never written, so
 * a truncated array is never valid JSON, and stderr says where it stopped. Nothing is buffered except what --jq
 * must see whole (the merged items, or the pages with --slurp).
 */
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Context } from '../../context.js';
import { PlatError, UsageError } from '../../errors.js';
import type { JqProgram } from '../../terminal/jq.js';
import {
  itemsPath,
  nextPageHint,
  openClient,
  readPages,
  responseFailure,
  responseHeader,
  type ApiClient,
  type ApiRequest,
  type Page,
  type Pages,
} from '../../session/index.js';
import { escapeJsonForTerminal, sanitize } from '../../terminal/text.js';
import { assertRegularFile, bodyOf, parseRetry, prepareRequest, type CallFlags, type PreparedRequest } from '../../requests/prepare.js';
import { parsePositiveInt } from '../../requests/values.js';
import { minorGc } from '../../terminal/stream-out.js';

/**
 * Output between two forced minor GCs (about ten pages of 100 items). Each page's text, parsed items and output
 * are garbage at once, but V8's young generation has already grown during start-up, and it grows further as the
 * bytes surviving each scavenge add up, so left alone its pages are all touched: without these GCs 1,000 pages of
 * 100 items peaked at 66-67 MiB, 10,000 at 70, and 40,000 pages of 25 items at 82 (past the 80 MiB target); with
 * them 61, 64 and 74 (the rest is the loop guard's URLs). Not free: ~100 scavenges per 1,000 pages cost 2-4 % of
 * plat's CPU there (20 interleaved runs: median pairwise ratio to the Node loop 1.28 with, 1.25 without), which
 * is the price of memory that stays flat whatever the length (src/terminal/stream-out.ts does the same for downloads).
 */
const GC_EVERY_CHARS = 64 * 1024;
/** --ndjson writes (and --jq filters) a page's items this many characters at a time. */
const NDJSON_BATCH_CHARS = 64 * 1024;




export async function run(ctx: Context, method: string, target: string, flags: CallFlags): Promise<void> {
  const checked = await checkFlags(ctx, method, flags);
  const client = await openClient(ctx, { auth: flags.anonymous ? 'anonymous' : 'auto' });
  const prepared = await prepareRequest(
    { method, target, headers: flags.header ?? [], fields: flags.field ?? [], typedFields: flags.typedField ?? [], input: flags.input },
    client.baseUrl,
    () => readText(ctx.io.stdin),
  );
  if (prepared.inputFrom && prepared.inputFrom !== '-') await assertRegularFile(prepared.inputFrom, '--input');
  await send(ctx, client, prepared, flags, checked);
}

/** `plat op` with --paginate or --jq: its request is built (and checked against the document); the rest as plat call. */
export async function runPrepared(ctx: Context, client: ApiClient, prepared: PreparedRequest, flags: CallFlags): Promise<void> {
  await send(ctx, client, prepared, flags, await checkFlags(ctx, prepared.method, flags));
}

/** The flags, and the expression, checked before anything is sent: a typo costs no request. */
async function checkFlags(ctx: Context, method: string, flags: CallFlags) {
  const options = validate(method, flags);
  let jq: JqProgram | undefined;
  if (flags.jq !== undefined) {
    const { compileJq } = await import('../../terminal/jq.js');
    jq = await compileJq(flags.jq, { pretty: ctx.io.stdoutIsTTY && !flags.ndjson, signal: ctx.signal });
  }
  return { options, jq };
}

async function send(
  ctx: Context,
  client: ApiClient,
  prepared: PreparedRequest,
  flags: CallFlags,
  { options, jq }: Awaited<ReturnType<typeof checkFlags>>,
): Promise<void> {
  const { io } = ctx;
  // The cached /openapi.json (from `plat op`), if any: warn about unknown paths and scopes the session lacks.
  if (prepared.sameOrigin) {
    const { checkCall } = await import('../../catalogue/call-check.js');
    await checkCall(ctx, { ...prepared, baseUrl: client.baseUrl, profile: flags.anonymous ? undefined : client.profile });
  }
  const timeoutSeconds = parsePositiveInt(flags.timeout, '--timeout', 86_400);
  const request: ApiRequest = {
    method: prepared.method,
    url: prepared.url,
    headers: prepared.headers,
    body: prepared.jsonBody === undefined && prepared.inputFrom === undefined ? undefined : () => bodyOf(ctx, prepared),
    replayable: prepared.inputFrom !== '-',
    retries: options.retries,
    timeoutMs: timeoutSeconds ? timeoutSeconds * 1000 : undefined,
  };
  const out = new Output(io.stdout);
  if (!flags.paginate) return filterOne(ctx, client, request, jq!, out);
  const mode = flags.ndjson ? 'ndjson' : flags.slurp ? 'slurp' : 'items';
  const pages = await readPages(ctx, client, request, { ...options, wholeBodies: mode === 'slurp' });
  try {
    if (jq && mode !== 'ndjson') await filterAll(pages, mode, jq, out);
    else if (mode === 'ndjson') await streamNdjson(pages, jq, out, io.stdoutIsTTY);
    else await streamArray(pages, mode, io.stdoutIsTTY, out);
  } catch (error) {
    if (error instanceof PlatError && out.openArray) {
      error.message += ` The output stopped after ${out.written} ${mode === 'slurp' ? 'pages' : 'items'} and is incomplete: its closing ] was not printed.`;
    } else if (error instanceof PlatError && out.written > 0) {
      error.message += ` The output stopped after ${out.written} ${flags.jq === undefined ? 'items' : 'pages'} and is incomplete.`;
    }
    throw error;
  }
  if (pages.limited) io.note(`Stopped at ${flags.maxItems !== undefined ? '--max-items' : '--max-pages'}: the list has more.`);
}

function validate(method: string, flags: CallFlags) {
  const pagingOnly = (['ndjson', 'slurp', 'maxPages', 'maxItems', 'items', 'next'] as const).filter((k) => flags[k] !== undefined);
  const name = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  if (!flags.paginate && pagingOnly.length > 0) throw new UsageError(`${name(pagingOnly[0]!)} goes with --paginate.`);
  if (flags.ndjson && flags.slurp) throw new UsageError('--ndjson and --slurp are two output shapes: choose one.');
  if (flags.include) throw new UsageError(`-i cannot be combined with ${flags.paginate ? '--paginate' : '--jq'}: the output is JSON only.`);
  if (flags.paginate && method.toUpperCase() !== 'GET') throw new UsageError(`--paginate follows GET lists (got ${method}).`);
  if (flags.jq !== undefined && method.toUpperCase() === 'HEAD') throw new UsageError('--jq needs a response body: HEAD has none.');
  if (flags.jq !== undefined && flags.jq.trim() === '') throw new UsageError('--jq needs an expression, for example --jq .title');
  return {
    maxPages: parsePositiveInt(flags.maxPages, '--max-pages', 10_000_000),
    maxItems: parsePositiveInt(flags.maxItems, '--max-items', Number.MAX_SAFE_INTEGER),
    items: flags.items === undefined ? undefined : itemsPath(flags.items, '--items'),
    next: flags.next === undefined ? undefined : nextPageHint(flags.next),
    // As plat call's own --retry: per request, so per page with --paginate.
    retries: flags.retry === undefined ? undefined : parseRetry(flags.retry),
  };
}


/**
 * --jq without --paginate: the response, filtered. An HTTP error's body is printed as it came (the contract); a 403
 * for a scope the session lacks may be stepped up at a terminal first, as plat call without --jq.
 */
async function filterOne(ctx: Context, client: ApiClient, request: ApiRequest, jq: JqProgram, out: Output) {
  const response = await client.send(request, { stepUp: {} });
  const failure = responseFailure(ctx, request, response);
  if (failure) {
    await pipeline(response.body, ctx.io.stdout, { end: false }).catch(() => {});
    throw failure;
  }
  const { MAX_JQ_INPUT_CHARS, jqInputTooLarge } = await import('../../terminal/jq.js');
  // Refused as soon as it passes what jq takes, not after reading it all.
  const text = await readText(response.body, MAX_JQ_INPUT_CHARS, () => jqInputTooLarge(`The response to ${request.method} ${sanitize(request.url.pathname, 120)}`));
  if (text.trim() === '') return;
  try {
    JSON.parse(text);
  } catch {
    const type = sanitize(responseHeader(response, 'content-type') ?? 'no content type', 100);
    throw new PlatError(`The response to ${request.method} ${sanitize(request.url.pathname, 120)} is not JSON (${type}): --jq needs JSON.`);
  }
  await out.write(await jq.apply(text));
}

/** The default and --slurp without --jq: `[`, then items (or pages) as they arrive, and `]` only at the end. */
async function streamArray(pages: Pages, mode: 'items' | 'slurp', pretty: boolean, out: Output) {
  // On a terminal (pretty), what a terminal would act on inside the server's strings is written as \u escapes.
  const render = pretty ? (v: unknown) => `  ${escapeJsonForTerminal(JSON.stringify(v, null, 2)).replace(/\n/g, '\n  ')}` : (v: unknown) => JSON.stringify(v);
  for await (const page of pages) {
    const values = mode === 'slurp' ? [page.body] : page.items;
    // In batches: a page of millions of items is never one string of them all.
    let text = '';
    let pending = 0;
    const flush = async () => {
      out.written += pending;
      pending = 0;
      await out.write(text);
      text = '';
    };
    for (const value of values) {
      text += `${out.openArray || pending > 0 ? ',\n' : '[\n'}${render(value)}`;
      pending++;
      if (text.length >= NDJSON_BATCH_CHARS) {
        out.openArray = true;
        await flush();
      }
    }
    if (pending > 0) out.openArray = true;
    await flush();
  }
  await out.write(out.openArray ? '\n]\n' : '[]\n');
  out.openArray = false;
}

/** --ndjson: one compact item per line (or, with --jq, the filter's output for each item), page by page. */
async function streamNdjson(pages: Pages, jq: JqProgram | undefined, out: Output, terminal: boolean) {
  for await (const page of pages) {
    // In batches: a page of millions of tiny items is never turned into one string of them all (nor, with --jq,
    // handed to jq past what it takes at once).
    let batch: string[] = [];
    let chars = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const text = jq ? await jq.applyEach(`[${batch.join(',')}]`) : `${terminal ? escapeJsonForTerminal(batch.join('\n')) : batch.join('\n')}\n`;
      out.written += jq ? 1 : batch.length;
      batch = [];
      chars = 0;
      await out.write(text);
    };
    for (const item of page.items) {
      const json = JSON.stringify(item);
      if (chars + json.length > NDJSON_BATCH_CHARS) await flush();
      batch.push(json);
      chars += json.length + 1;
    }
    await flush();
  }
}

/** --jq over the merged items (or the pages, with --slurp): jq sees one array, so it is gathered first. */
async function filterAll(pages: Pages, mode: 'items' | 'slurp', jq: JqProgram, out: Output) {
  const { MAX_JQ_INPUT_CHARS, jqInputTooLarge } = await import('../../terminal/jq.js');
  // Kept as JSON text, not objects: a third of the memory, and what jq reads anyway; refused once past what jq takes.
  const parts: string[] = [];
  let chars = 0;
  for await (const page of pages as AsyncIterable<Page>) {
    const part = mode === 'slurp' ? JSON.stringify(page.body) : page.items.length > 0 ? Array.from(page.items, (item) => JSON.stringify(item)).join(',') : undefined;
    if (part === undefined) continue;
    chars += part.length + 1;
    if (chars > MAX_JQ_INPUT_CHARS) throw jqInputTooLarge(`The merged ${mode === 'slurp' ? 'pages' : 'items'} (by page ${page.number})`);
    parts.push(part);
  }
  let filtered: string;
  try {
    filtered = await jq.apply(`[${parts.join(',')}]`);
  } catch (error) {
    // gh api --paginate filters each page, so '.items[]' is what its users type: say what jq was given here.
    if (error instanceof Error) {
      error.message +=
        mode === 'items'
          ? " With --paginate, --jq gets one array of every page's items (not each page, as gh api's does): write .[] where gh takes .items[], or add --slurp to filter the array of whole pages."
          : ' With --paginate --slurp, --jq gets one array of the whole page bodies.';
    }
    throw error;
  }
  await out.write(filtered);
}

/** stdout with backpressure (a slow reader slows the paging instead of filling memory), collecting as it goes. */
class Output {
  openArray = false;
  written = 0;
  constructor(private readonly stream: Writable) {}
  private sinceGc = 0;
  write(text: string): Promise<void> {
    this.sinceGc += text.length;
    if (this.sinceGc >= GC_EVERY_CHARS) {
      this.sinceGc = 0;
      minorGc()?.({ type: 'minor' });
    }
    if (text === '' || this.stream.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        resolve();
      };
      this.stream.once('drain', done);
      this.stream.once('close', done);
    });
  }
}

async function readText(stream: NodeJS.ReadableStream, max = Number.POSITIVE_INFINITY, tooLarge?: () => PlatError): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > max) {
      (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      throw tooLarge?.() ?? new PlatError(`The response is larger than ${max / 1024 / 1024} MiB.`);
    }
    chunks.push(Buffer.from(chunk as Buffer));
  }
  return Buffer.concat(chunks).toString('utf8');
}

