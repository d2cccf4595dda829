/**
 * Every page of a list, one request at a time through the ApiClient (so each page gets its token, the origin rule,
 * refresh under the lock and retries with Retry-After: a 429 on page 40 waits and goes on from page 40).
 * Used by `plat call --paginate` and by the library's `client.paginate()`. Only one page is held at a time.
 */
import { InterruptedError, PlatError, UsageError } from '../../errors.js';
import type { Readable } from 'node:stream';
import type { Context } from '../../context.js';
import { detectShape, itemsOf, nextPage, type PageShape, type ShapeHints } from './detect.js';
import { header, type ApiClient, type ApiRequest, type ApiResponse } from '../request.js';
import { readWholeBody } from '../../http/read-body.js';
import { responseError } from '../response-error.js';
import { sanitize } from '../../terminal/text.js';
import { createHash } from 'node:crypto';
import { headersForOtherOrigin } from '../origin-headers.js';
import { MAX_JSON_DEPTH, readPage, TooDeepError, type Items, type LazyItems } from './text.js';

export interface PaginateOptions extends ShapeHints {
  /** Stop after this many pages. */
  maxPages?: number;
  /** Stop once this many items were yielded (the last page is cut short). */
  maxItems?: number;
  /** A page larger than this is refused rather than buffered (default 64 MiB). */
  maxPageBytes?: number;
  /** The caller reads `body` whole (--slurp): no array of the page is left in its bytes (text.ts). */
  wholeBodies?: boolean;
}

export interface Page {
  /** 1-based. */
  number: number;
  url: URL;
  /** The parsed JSON body, whole. */
  body: unknown;
  /**
   * Its items (cut short on the last page when maxItems says so): an array, or, for a large one, the items left in
   * the page's bytes and parsed one at a time as they are iterated.
   */
  items: Items;
}

const DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024;

/**
 * The pages of a list. After iteration, `limited` says whether maxPages/maxItems stopped it while the server had
 * more. A failure on any page throws (a PlatError saying which page); pages already yielded stay yielded.
 */
export class Pages implements AsyncIterable<Page> {
  limited = false;
  private readonly ctx: Context;
  private readonly client: ApiClient;
  private readonly first: ApiRequest;
  private readonly options: PaginateOptions;

  constructor(ctx: Context, client: ApiClient, first: ApiRequest, options: PaginateOptions = {}) {
    if (first.method.toUpperCase() !== 'GET') throw new UsageError(`Only GET lists can be paginated (got ${first.method}).`);
    this.ctx = ctx;
    this.client = client;
    this.first = first;
    this.options = options;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Page> {
    const { maxPages, maxItems } = this.options;
    // Digests, not URLs: a server can make every cursor a megabyte long, and the guard keeps one per page.
    const seen = new Set<string>();
    const origin = this.first.url.origin;
    const warned = new Set<string>();
    let url: URL | undefined = this.first.url;
    let shape: PageShape | undefined;
    let itemCount = 0;
    for (let number = 1; url; number++) {
      seen.add(digest(url));
      let headers = this.first.headers;
      if (url.origin !== origin) {
        // The token is already held back there (request.ts); the user's own credentials are too.
        const { kept, dropped } = headersForOtherOrigin(headers);
        headers = kept;
        if (dropped.length > 0 && !warned.has(url.origin)) {
          warned.add(url.origin);
          this.ctx.io.note(`Page ${number} is on ${sanitize(url.origin, 100)}, not ${sanitize(origin, 100)}: not sending ${dropped.map((n) => sanitize(n, 60)).join(', ')} there (given for ${sanitize(origin, 100)}).`);
        }
      }
      const request: ApiRequest = { ...this.first, url, headers, body: undefined };
      // Step-up that asks: from the page that failed, the pages before it already printed; the client then holds
      // the new session for the pages after it.
      const response = await this.client.send(request, { stepUp: { what: `Page ${number} of this list` } });
      const failure = responseError(this.ctx, request, response);
      if (failure) {
        response.body.resume();
        if (number > 1) failure.message = `Page ${number}: ${failure.message}`;
        throw failure;
      }
      if (response.status >= 300) {
        // Redirects are never followed (no token may follow one): a list that moved is the caller's to name.
        response.body.resume();
        const location = header(response, 'location');
        throw new PlatError(
          `Page ${number} (${request.method} ${sanitize(url.pathname, 120)}) answered HTTP ${response.status}${location ? ` to ${sanitize(location, 160)}` : ''}: plat does not follow redirects; call the list where it is now.`,
        );
      }
      // Lazily only where the items are the page or one of its members (what detection finds, or --items a.b's a).
      const lazily = !this.options.wholeBodies && (this.options.items === undefined || this.options.items.length <= 1);
      const { body, lazy } = await readJson(response, request, number, this.options.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES, this.ctx.signal, lazily);
      const link = header(response, 'link');
      shape ??= detectShape(body, link, this.options);
      const parsed = itemsOf(body, shape);
      let items: Items = lazy.get(parsed) ?? parsed;
      const next = nextPage(shape, url, body, link);
      if (!next && saysMore(body)) {
        // Stripe-style lists (has_more, the next page asked for by the last item's id) name no next page: printing
        // this page as the whole list would be a silent truncation, unless --max-pages asked for no more.
        if (maxPages !== undefined && number >= maxPages) this.limited = true;
        else throw new PlatError(
          `Page ${number} says it has more (has_more: true) but names no next page that plat can follow. Name it with --next <path>=<param>, or pass --max-pages ${number} to take what is there.`,
        );
      }
      if (maxItems !== undefined && itemCount + items.length >= maxItems) {
        this.limited = itemCount + items.length > maxItems || next !== undefined;
        items = items.slice(0, maxItems - itemCount);
        yield { number, url, body, items };
        return;
      }
      itemCount += items.length;
      yield { number, url, body, items };
      if (next && seen.has(digest(next.url))) {
        const what = next.via === 'cursor' ? 'cursor' : next.via === 'page' ? 'page number' : 'next link';
        throw new PlatError(
          `Page ${number}'s ${what} leads back to a page already fetched (${redactQuery(next.url)}): stopping instead of looping. The server's pagination is broken; --max-pages bounds a run.`,
        );
      }
      if (next && maxPages !== undefined && number >= maxPages) {
        this.limited = true;
        return;
      }
      url = next?.url;
    }
  }
}

/** Every item of every page, in order: the library's `client.paginate()`. */
export async function* paginateItems(ctx: Context, client: ApiClient, first: ApiRequest, options: PaginateOptions = {}): AsyncGenerator<unknown> {
  for await (const page of new Pages(ctx, client, first, options)) yield* page.items;
}

function readJson(
  response: ApiResponse,
  request: ApiRequest,
  number: number,
  max: number,
  interrupt: AbortSignal,
  lazily: boolean,
): Promise<{ body: unknown; lazy: Map<unknown, LazyItems> }> {
  // Only a failure names the page: the sentence is not built for every page that succeeds.
  const where = () => `page ${number} of ${request.method} ${sanitize(request.url.pathname, 120)}`;
  const tooLarge = () => new PlatError(`The ${where()} is larger than ${max / 1024 / 1024} MiB: too large to hold as one page.`);
  return readWholeBody(response.body as Readable, max, tooLarge).then(
    (bytes) => {
      const notJson = () => new PlatError(`The ${where()} is not JSON (${sanitize(header(response, 'content-type') ?? 'no content type', 100)}): --paginate reads JSON lists.`);
      try {
        return readPage(bytes, lazily, notJson);
      } catch (error) {
        // Printing an item 100,000 deep would recurse past the stack: refused before anything is parsed.
        if (error instanceof TooDeepError) throw new PlatError(`The ${where()} nests deeper than ${MAX_JSON_DEPTH} levels: plat does not read a list like that.`);
        throw notJson();
      }
    },
    (error: unknown) => {
      if (error instanceof PlatError) throw error;
      // Ctrl-C ends the body it interrupts: that is an interruption (exit 130), not a page that broke off.
      throw interrupt.aborted ? new InterruptedError() : new PlatError(`The ${where()} broke off before it was complete. Try again.`, 3, { cause: error });
    },
  );
}

function digest(url: URL): string {
  return createHash('sha256').update(url.href).digest('base64');
}

/** A page that says, in one of the usual words, that the list goes on. */
function saysMore(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  const meta = (b.meta ?? b.pagination ?? b.page_info ?? b.pageInfo) as Record<string, unknown> | undefined;
  return b.has_more === true || b.hasMore === true || meta?.has_more === true || meta?.hasNextPage === true || meta?.has_next_page === true;
}

/** Server-supplied, and cursors can be long and opaque: enough of the URL to recognise it, made safe to print. */
function redactQuery(url: URL): string {
  return sanitize(`${url.origin}${url.pathname}${url.search}`, 160);
}
