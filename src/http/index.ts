/**
 * The one HTTP client. `request()` streams (Node Readables both ways) and is the hot path of `plat call`;
 * `fetch()` gives oauth4webapi the Fetch API shape on top of it. Both add a User-Agent, timeouts, redacted
 * tracing for --verbose, and turn network failures into sentences.
 *
 * Transport: Node's own http/https modules when no proxy is configured — they are part of Node's start-up
 * snapshot, so a call costs a few milliseconds instead of the ~140 ms it takes to load undici. With HTTP(S)_PROXY
 * set, undici's EnvHttpProxyAgent carries every request (and honours NO_PROXY).
 */
import { Readable } from 'node:stream';
import { InterruptedError, NetworkError, PlatError } from '../errors.js';
import { describeNetworkCode } from './network-codes.js';
import type { IO } from '../terminal/io.js';
import { redactBody, redactHeaderValue, redactUrl } from '../redact.js';
import type { HttpRequest, HttpResponse, Transport } from './types.js';
import { sanitize } from '../terminal/text.js';

export type Fetch = (input: string | URL, init?: RequestInit & { maxBodyBytes?: number }) => Promise<Response>;

export interface HttpOptions {
  io: IO;
  env: Record<string, string | undefined>;
  verbose: boolean;
  userAgent: string;
  now: () => number;
  /** Aborts every request in flight, response bodies included (Ctrl-C). */
  signal?: AbortSignal;
  connectTimeoutMs?: number;
  /** Overall deadline of each fetch() (the protocol's requests); default PROTOCOL_DEADLINE_MS. */
  protocolDeadlineMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open; tests shorten it, as the deadlines above. */
  keepAliveTimeoutMs?: number;
}

export interface Http {
  request(request: HttpRequest): Promise<HttpResponse>;
  fetch: Fetch;
  /** See Transport.close. */
  close(options?: { exiting?: boolean }): Promise<void>;
}

const TRACE_BODY_LIMIT = 64 * 1024;
/**
 * The whole of one protocol exchange (metadata, registration, token, revocation), body included: idle timeouts
 * alone let a server that sends a byte a second hold plat (and a refresh holding the profile's lock) forever.
 */
const PROTOCOL_DEADLINE_MS = 30_000;

/** True when the environment names a proxy; then undici (which understands NO_PROXY) carries the requests. */
function proxyConfigured(env: Record<string, string | undefined>): boolean {
  return Boolean(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy);
}

export function createHttp(options: HttpOptions): Http {
  const { io, verbose, now } = options;
  const timeouts = {
    connectMs: options.connectTimeoutMs ?? 10_000,
    headersMs: options.headersTimeoutMs ?? 30_000,
    bodyMs: options.bodyTimeoutMs ?? 30_000,
    keepAliveMs: options.keepAliveTimeoutMs,
  };
  let transport: Promise<Transport> | undefined;
  // The transport once loaded: a paginated run's thousands of requests then await nothing before each is sent.
  let loaded: Transport | undefined;
  const getTransport = () =>
    (transport ??= (
      proxyConfigured(options.env)
        ? import('./undici.js').then(({ undiciTransport }) => undiciTransport(timeouts, options.signal))
        : import('./node.js').then(({ nodeTransport }) => nodeTransport(timeouts, options.signal))
    ).then((t) => (loaded = t)));

  const request = async (req: HttpRequest): Promise<HttpResponse> => {
    const headers: Record<string, string> = { 'user-agent': options.userAgent };
    if (req.headers) for (const name of Object.keys(req.headers)) headers[name.toLowerCase()] = req.headers[name]!;
    const method = req.method.toUpperCase();
    const started = now();
    if (verbose) traceRequest(io, method, req.url, headers, req.body);
    let response: HttpResponse;
    try {
      response = await (loaded ?? (await getTransport())).send({ ...req, method, headers });
    } catch (error) {
      if (verbose) io.err(`! ${method} ${redactUrl(req.url)} failed after ${now() - started} ms`);
      throw toNetworkError(error, req.url, options.signal);
    }
    if (verbose) traceResponse(io, response, now() - started);
    response.body.on('error', () => {}); // errors surface to whoever consumes the body
    return response;
  };

  const fetch: Fetch = async (input, init = {}) => {
    const url = new URL(String(input));
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    let body: string | Uint8Array | Readable | undefined;
    if (init.body instanceof URLSearchParams) {
      body = init.body.toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    } else if (typeof init.body === 'string' || init.body instanceof Uint8Array) {
      body = init.body;
    } else if (init.body) {
      throw new TypeError('plat fetch: unsupported request body type');
    }
    const response = await request({
      method: init.method ?? 'GET',
      url,
      headers,
      body,
      signal: init.signal ?? undefined,
      timeoutMs: options.protocolDeadlineMs ?? PROTOCOL_DEADLINE_MS,
    });
    const limited = init.maxBodyBytes ? limitBody(response, init.maxBodyBytes, url) : response.body;
    return toWebResponse(response, init.method ?? 'GET', limited);
  };

  return {
    request,
    fetch,
    close: async (closeOptions) => {
      if (transport) await (await transport).close(closeOptions);
    },
  };
}

/**
 * A streamed response as a Fetch API Response (for oauth4webapi and the library's client.fetch). Statuses the Fetch
 * API forbids a body for (204, 205, 304) and HEAD get none: the socket is drained instead.
 */
export function toWebResponse(response: HttpResponse, method: string, body: Readable = response.body): Response {
  const empty = method.toUpperCase() === 'HEAD' || response.status === 204 || response.status === 205 || response.status === 304;
  if (empty) body.resume();
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return new Response(empty ? null : (Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

function traceRequest(io: IO, method: string, url: URL, headers: Record<string, string>, body: unknown): void {
  io.err(`> ${method} ${redactUrl(url)}`);
  for (const [name, value] of Object.entries(headers)) io.err(`> ${name}: ${redactHeaderValue(name, value)}`);
  if (typeof body === 'string') io.err(`> ${redactBody(body, headers['content-type'])}`);
  else if (body instanceof Uint8Array) io.err(`> <${body.byteLength} bytes>`);
  else if (body) io.err('> <streamed body>');
}

function traceResponse(io: IO, response: HttpResponse, ms: number): void {
  // The status line and headers are the server's words: made safe before they reach the terminal.
  io.err(`< ${response.status} ${sanitize(response.statusText, 80)} (${ms} ms)`);
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
    io.err(`< ${sanitize(response.rawHeaders[i]!, 200).toLowerCase()}: ${sanitize(redactHeaderValue(response.rawHeaders[i]!, response.rawHeaders[i + 1]!), 0)}`);
  }
  const type = String(response.headers['content-type'] ?? '');
  const length = Number(response.headers['content-length'] ?? NaN);
  // Only small JSON/form bodies are traced (OAuth responses), and only redacted; API bodies go to stdout anyway.
  if ((type.includes('json') || type.includes('x-www-form-urlencoded')) && length <= TRACE_BODY_LIMIT) {
    const chunks: Buffer[] = [];
    const original = response.body;
    const copy = new Readable({ read() {} });
    original.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      copy.push(chunk);
    });
    original.on('end', () => {
      io.err(`< ${sanitize(redactBody(Buffer.concat(chunks).toString('utf8'), type), 0)}`);
      copy.push(null);
    });
    original.on('error', (error) => copy.destroy(error));
    response.body = copy;
  }
}

/** A body that fails once it exceeds `max` bytes: a hostile server cannot make plat buffer gigabytes. */
function limitBody(response: HttpResponse, max: number, url: URL): Readable {
  const declared = Number(response.headers['content-length'] ?? NaN);
  const tooLarge = () =>
    new PlatError(`The server at ${url.origin} sent more than ${max} bytes where a small document was expected.`);
  if (declared > max) {
    response.body.destroy();
    throw tooLarge();
  }
  let seen = 0;
  const limited = new Readable({ read() {} });
  response.body.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > max) {
      response.body.destroy();
      limited.destroy(tooLarge());
      return;
    }
    limited.push(chunk);
  });
  response.body.on('end', () => limited.push(null));
  response.body.on('error', (error) => limited.destroy(error));
  return limited;
}


/** Turns whatever the transport threw into a sentence with the contract's exit code. */
function toNetworkError(error: unknown, url: URL, interrupt?: AbortSignal): PlatError {
  if (error instanceof PlatError) return error;
  if (interrupt?.aborted) return new InterruptedError();
  const err = error as { name?: string; code?: string; cause?: { code?: string; name?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.cause?.name === 'TimeoutError') {
    return new NetworkError(`The request to ${url.origin} timed out. Check the network, or raise --timeout.`, { cause: error });
  }
  if (err?.name === 'AbortError') return new InterruptedError();
  const code = err?.cause?.code ?? err?.code ?? '';
  const message = `${err?.cause?.message ?? ''} ${(error as Error)?.message ?? ''}`;
  if (code === 'ERR_PLAT_NOT_LOOPBACK') {
    // Not a network fault: plat itself would not send it. Said as such, so nobody goes looking for one.
    const address = (err?.cause as { address?: string } | undefined)?.address ?? (error as { address?: string }).address;
    return new NetworkError(
      `plat refused to send the request to ${url.origin}: ${url.hostname} resolves to ${address ? sanitize(address, 60) : 'no address'}, not a loopback address, and plain http:// goes only to loopback addresses (127.0.0.1, ::1) so that nothing unencrypted leaves the machine. Use https://, or make the name resolve to 127.0.0.1.`,
      { cause: error, code },
    );
  }
  if (url.protocol === 'https:' && code === 'EPROTO' && /wrong version number|packet length too long|http request/i.test(message)) {
    // The TLS handshake got a plain-HTTP answer: the address is right, the scheme is not.
    const http = `http://${url.host}`;
    return new NetworkError(
      `${url.origin} does not speak TLS (https): the server there answers plain HTTP. Check the base URL's scheme and port` +
        `${['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) ? ` (for a server on this machine: ${http})` : ''}.`,
      { cause: error, code },
    );
  }
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) {
    return new NetworkError(
      `Could not establish a trusted TLS connection to ${url.origin} (${code}). If the server uses a private CA, set NODE_EXTRA_CA_CERTS to its certificate.`,
      { cause: error, code },
    );
  }
  const what = describeNetworkCode(code) ?? (code ? `network error ${code}` : 'the request failed');
  return new NetworkError(`Could not reach ${url.origin}: ${what}. Check the base URL and your network (or proxy settings).`, {
    cause: error,
    code: code || undefined,
  });
}
