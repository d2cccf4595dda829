/**
 * The forwarding delegate behind the gate: one request from a local program sent to the platform through the
 * session's one authenticated path (session/index.ts's openClient: the token only to the session's origin, refreshed
 * under the cross-process lock, one refresh and one replay after a 401), and the platform's answer streamed back as
 * it came. The proxy adds no rule about tokens; it only decides when to open a new client: when the profile file
 * changed (another plat signed in, out, or refreshed), or when the last one failed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import type { Context } from '../context.js';
import { AuthError, InterruptedError, NetworkError, PlatError } from '../errors.js';
import { apiUrl, openClient, profileMark, type ApiClient, type ApiRequest, type ApiResponse } from '../session/index.js';
import { GC_EVERY_BYTES, minorGc } from '../terminal/stream-out.js';
import { sanitize } from '../terminal/text.js';
import { decodersFor } from './encoding.js';
import { downstreamHeaders, upstreamHeaders, type Dropped } from './headers.js';
import { MaskingStream, SecretMasker } from './scrub.js';

/** A request body up to this size is kept, so a 401 can be refreshed and replayed with it; a larger one streams. */
const REPLAYABLE_BODY_BYTES = 64 * 1024;
/** Requests between two forced full collections (see forward()). */
const MAJOR_GC_EVERY_EXCHANGES = 4096;
/** Every exchange ends: an hour for a body to move (a 1 GiB download on a slow link), after which it is closed. */
const EXCHANGE_DEADLINE_MS = 60 * 60_000;

export interface Outcome {
  status: number;
  url?: URL;
  dropped: Dropped;
  /** Why the proxy answered in its own name (an error's code), when it did. */
  error?: string;
}

export class Forwarder {
  private client: Promise<ApiClient> | undefined;
  private mark = '';
  private sinceGc = 0;
  private exchanges = 0;
  private masker: { version: number; masker: SecretMasker } | undefined;

  /** `prefix`: the proxy's own path prefix (`/KEY` over TCP, empty on a socket), for a Location it points back at. */
  constructor(
    private readonly ctx: Context,
    private readonly prefix: () => string = () => '',
  ) {}

  /** The session's client, opened again when the profile changed since, so a login or logout is seen at once. */
  private async currentClient(): Promise<ApiClient> {
    const mark = await profileMark(this.ctx);
    if (!this.client || mark !== this.mark) {
      this.mark = mark;
      this.client = openClient(this.ctx, { auth: 'required' });
    }
    const client = this.client;
    try {
      return await client;
    } catch (error) {
      // Not kept: the next request asks again (a login made meanwhile is picked up without a restart).
      if (this.client === client) this.client = undefined;
      throw error;
    }
  }

  /** Sends `path` (origin-form, after the key) to the platform and streams the answer back to `res`. */
  async forward(req: IncomingMessage, res: ServerResponse, path: string): Promise<Outcome> {
    // Under a steady load V8 grows its old generation with the garbage of thousands of exchanges and collects it
    // late: a full collection every few thousand requests (a few ms) keeps the proxy's RSS level however long it
    // runs, instead of rising with the count (a few µs a request).
    if (++this.exchanges % MAJOR_GC_EVERY_EXCHANGES === 0) (minorGc() as ((options: { type: 'major' }) => void) | null)?.({ type: 'major' });
    const dropped: Dropped = {};
    const headers = upstreamHeaders(req.rawHeaders, dropped);
    let url: URL | undefined;
    let baseUrl: string | undefined;
    let response: ApiResponse;
    try {
      const client = await this.currentClient();
      baseUrl = client.baseUrl;
      url = apiUrl(path, client.baseUrl, 'sign in with plat login');
      const request = await this.requestOf(req, url, headers);
      response = await client.send(request);
    } catch (error) {
      if (error instanceof AuthError) this.client = undefined;
      return { ...this.refuseWith(res, error), url, dropped };
    }
    const status = response.status;
    // The answer's body as the client would read it: decoded from its content coding (passed on as identity), and
    // masked of the session's secrets as they are now (the token just sent among them).
    const bodyless = req.method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
    const encoded = decodersFor(response.headers['content-encoding']);
    if (!bodyless && (encoded === undefined || (encoded.length > 0 && response.headers['content-range'] !== undefined))) {
      response.body.destroy();
      const coding = sanitize(String(response.headers['content-encoding']), 60);
      answer(res, 502, 'undecodable_answer', `The platform answered in a content coding the proxy cannot read (${coding}${encoded ? ', a part of a compressed body' : ''}), so it cannot check the answer for the session's secrets: it is not passed on.`);
      return { status: 502, url, dropped, error: 'undecodable_answer' };
    }
    const masker = this.currentMasker();
    try {
      const passed = downstreamHeaders(response.rawHeaders, dropped, (value) => this.ctx.secrets.scrub(value) !== value);
      for (let i = 0; i + 1 < passed.length; i += 2) {
        const name = passed[i]!.toLowerCase();
        if (name === 'location') passed[i + 1] = throughProxy(passed[i + 1]!, url!, baseUrl, this.prefix()) ?? passed[i + 1]!;
        // Decoded, the body is another representation: its coding and length are gone, its ETag only a weak one.
        if (encoded?.length && (name === 'content-encoding' || name === 'content-length')) passed[i] = '';
        if (encoded?.length && name === 'etag' && !passed[i + 1]!.startsWith('W/')) passed[i + 1] = `W/${passed[i + 1]}`;
      }
      res.writeHead(status, printable(response.statusText), encoded?.length ? passed.filter((_, i) => passed[i - (i % 2)] !== '') : passed);
    } catch {
      // A header Node will not send again (a value it finds invalid): said in the proxy's words, not half-passed on.
      response.body.destroy();
      answer(res, 502, 'bad_response', 'The platform answered with a header the proxy cannot pass on.');
      return { status: 502, url, dropped, error: 'bad_response' };
    }
    const stages = bodyless ? [] : [...(encoded ?? []), ...(masker.empty ? [] : [new MaskingStream(masker)])];
    await this.passOn(response.body, res, Number(response.headers['content-length'] ?? NaN), stages);
    return { status, url, dropped };
  }

  /**
   * The platform's body to the client, byte for byte, with backpressure both ways (the body is read only as fast as
   * the client takes it). Plain pipe() and two close listeners rather than stream.pipeline(), whose AbortSignal and
   * DOMException per exchange cost about a tenth of the proxy's own CPU on a small GET. A body that breaks off closes
   * the client's connection, so a short body is never passed off as a whole one; a client that goes away ends the
   * platform's body. Resolves when the exchange is over, either way.
   */
  private passOn(body: Readable, res: ServerResponse, declared: number, stages: Transform[]): Promise<void> {
    // As plat call's download (terminal/stream-out.ts): the spent 64 KiB read buffers live outside V8's heap until a
    // GC, so a minor GC every MiB passed on (over all requests) keeps a 1 GiB download as flat as a small one. A body
    // that says it is smaller than that needs no count, unless it is decoded: its Content-Length is what came
    // compressed (1 MiB of deflate inflates to 1 GiB), so what is counted then is what the decoders pass on, whose
    // spent buffers are the ones that pile up (measured: 1 GiB inflated from 1 MiB of gzip peaked at 63 MiB of RSS
    // counted by the compressed bytes, 60 MiB counted so; four in a row, 70 and 65).
    const decoded = stages.some((stage) => !(stage instanceof MaskingStream));
    if (decoded || !(declared < GC_EVERY_BYTES)) {
      const passed = stages.length === 0 ? body : stages[stages.length - 1]!;
      (decoded ? passed : body).on('data', (chunk: Buffer) => this.moved(chunk.length));
      coalesceWrites(passed, res);
    }
    return new Promise<void>((resolve) => {
      res.once('close', () => {
        if (!body.readableEnded) body.destroy();
        resolve();
      });
      if (decoded) {
        // A decoded answer: pipeline() ends every stage with a failure anywhere (a corrupt gzip closes the client's
        // connection, never a short body passed off as whole).
        pipeline([body, ...stages, res], () => {});
        return;
      }
      body.once('close', () => {
        if (!body.readableEnded) res.destroy();
      });
      if (stages.length === 0) body.pipe(res);
      else body.pipe(stages[0]!).pipe(res);
    });
  }

  /** The masker for the session's secrets as they are now: made again only when the set changed (a refresh). */
  private currentMasker(): SecretMasker {
    const version = this.ctx.secrets.version;
    if (!this.masker || this.masker.version !== version) this.masker = { version, masker: new SecretMasker(this.ctx.secrets.list()) };
    return this.masker.masker;
  }

  /** Counts bytes moved through the proxy, either way, and collects the spent read buffers every GC_EVERY_BYTES. */
  private moved(bytes: number): void {
    this.sinceGc += bytes;
    if (this.sinceGc < GC_EVERY_BYTES) return;
    this.sinceGc = 0;
    minorGc()?.({ type: 'minor' });
  }

  private async requestOf(req: IncomingMessage, url: URL, headers: Record<string, string>): Promise<ApiRequest> {
    const base = { method: req.method ?? 'GET', url, headers, retries: 0, timeoutMs: EXCHANGE_DEADLINE_MS };
    const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    const hasBody = length !== undefined ? length > 0 : req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) {
      req.resume();
      return base;
    }
    if (length !== undefined && length <= REPLAYABLE_BODY_BYTES) {
      const bytes = await readAll(req);
      return { ...base, body: () => bytes };
    }
    let given = false;
    return {
      ...base,
      replayable: false,
      body: () => {
        if (given) throw new PlatError('The request body was already sent.');
        given = true;
        // Counted for the GC pacing, as a download is: without it an upload's spent read buffers waited for V8's
        // 64 MiB external-memory limit (a 128 MiB upload peaked at 94 MiB). pipeline() carries a client's reset on
        // to the platform's request.
        const counted = new Transform({
          transform: (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
            this.moved(chunk.length);
            done(null, chunk);
          },
        });
        pipeline(req, counted, () => {});
        return counted;
      },
    };
  }

  /** The proxy's own answer for a request it could not forward, in a sentence that names what to do. */
  private refuseWith(res: ServerResponse, error: unknown): { status: number; error: string } {
    const say = (text: string) => this.ctx.secrets.scrub(sanitize(text, 0, { multiline: true }));
    if (error instanceof InterruptedError || this.ctx.signal.aborted) {
      res.destroy();
      return { status: 0, error: 'interrupted' };
    }
    if (error instanceof AuthError) return answer(res, 401, 'not_signed_in', say(error.message));
    if (error instanceof NetworkError) {
      const timedOut = /timed out/.test(error.message);
      return answer(res, timedOut ? 504 : 502, timedOut ? 'platform_timeout' : 'platform_unreachable', say(error.message));
    }
    if (error instanceof PlatError) return answer(res, 502, 'proxy_error', say(error.message));
    return answer(res, 500, 'proxy_error', `Unexpected failure in plat proxy: ${say((error as Error)?.message ?? String(error))}. Run it with --verbose for details, and report it if it repeats.`);
  }
}

/** A JSON answer in the proxy's own name (never cached, never shared with a page). */
export function answer(res: ServerResponse, status: number, error: string, message: string, extra: Record<string, string> = {}): { status: number; error: string } {
  if (res.headersSent) {
    res.destroy();
    return { status, error };
  }
  const body = `${JSON.stringify({ error, message })}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.end(body);
  return { status, error };
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
    stream.once('aborted', () => reject(new PlatError('The client closed the connection before sending its whole body.')));
  });
}

/**
 * The chunks `source` passes to `res` while one round of the event loop polls go out in one writev instead of a
 * write each: a TLS socket gives its 16 KiB records one callback each, ~15 of them a round on a fast download, and a
 * write per record was a third of the proxy's busy time. `res` is corked at a round's first chunk and uncorked once
 * the round's reads are done (setImmediate); its buffer (SOCKET_BUFFER_BYTES, server.ts) holds a round's chunks
 * without asking the platform's body to pause.
 */
function coalesceWrites(source: Readable, res: ServerResponse): void {
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  source.prependListener('data', () => {
    if (corked) return;
    corked = true;
    res.cork();
    setImmediate(uncork);
  });
}

/** A reason phrase Node will send (no control characters), else Node's own for the status. */
function printable(text: string): string | undefined {
  return /^[\t\x20-\x7e]*$/.test(text) && text ? text : undefined;
}

/**
 * A Location on the platform, as the proxy's own address: a client that follows a redirect (or a 201's Location)
 * stays behind the proxy, its key included, instead of landing on the proxy without it (a 403) or on the platform
 * without a token. A Location elsewhere, or outside the base URL's path, is passed on as it is.
 */
export function throughProxy(location: string, requestUrl: URL, baseUrl: string | undefined, prefix: string): string | undefined {
  if (!baseUrl) return undefined;
  let target: URL;
  try {
    target = new URL(location, requestUrl);
  } catch {
    return undefined;
  }
  const base = new URL(baseUrl);
  if (target.origin !== base.origin) return undefined;
  const basePath = base.pathname.replace(/\/+$/, '');
  if (basePath && target.pathname !== basePath && !target.pathname.startsWith(`${basePath}/`)) return undefined;
  return `${prefix}${target.pathname.slice(basePath.length) || '/'}${target.search}${target.hash}`;
}
