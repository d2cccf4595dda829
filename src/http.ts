/**
 * The one HTTP client: undici with timeouts and proxy-from-env, a User-Agent, optional redacted tracing
 * (--verbose), a bound on bodies read from the authorization server, and network failures turned into sentences.
 * Imported lazily: commands that never touch the network do not pay for undici.
 */
import { EnvHttpProxyAgent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { InterruptedError, NetworkError, PlatError } from './errors.js';
import type { IO } from './io.js';
import { redactBody, redactHeaderValue, redactUrl } from './redact.js';

export type Fetch = (input: string | URL, init?: RequestInit & { maxBodyBytes?: number }) => Promise<Response>;

export interface HttpOptions {
  io: IO;
  verbose: boolean;
  userAgent: string;
  now: () => number;
  /** Aborts every request (Ctrl-C). */
  signal?: AbortSignal;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

export interface Http {
  fetch: Fetch;
  dispatcher: Dispatcher;
  close(): Promise<void>;
}

const TRACE_BODY_LIMIT = 64 * 1024;

export function createHttp(options: HttpOptions): Http {
  // EnvHttpProxyAgent reads HTTP(S)_PROXY and NO_PROXY itself; NODE_EXTRA_CA_CERTS is applied by Node at start-up.
  const dispatcher = new EnvHttpProxyAgent({
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    headersTimeout: options.headersTimeoutMs ?? 30_000,
    bodyTimeout: options.bodyTimeoutMs ?? 30_000,
  });
  const { io, verbose, now } = options;

  const fetch: Fetch = async (input, init = {}) => {
    const url = new URL(String(input));
    const headers = new Headers(init.headers);
    if (!headers.has('user-agent')) headers.set('user-agent', options.userAgent);
    const signals = [init.signal, options.signal].filter((s): s is AbortSignal => Boolean(s));
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const method = (init.method ?? 'GET').toUpperCase();
    const started = now();
    if (verbose) traceRequest(io, method, url, headers, init.body);
    let response: Response;
    try {
      response = (await undiciFetch(url, {
        ...(init as object),
        headers,
        signal,
        dispatcher,
      } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    } catch (error) {
      if (verbose) io.err(`! ${method} ${redactUrl(url)} failed after ${now() - started} ms`);
      throw toNetworkError(error, url, options.signal);
    }
    if (verbose) await traceResponse(io, response, now() - started);
    return init.maxBodyBytes ? limitBody(response, init.maxBodyBytes, url) : response;
  };

  return { fetch, dispatcher, close: () => dispatcher.close() };
}

function traceRequest(io: IO, method: string, url: URL, headers: Headers, body: unknown): void {
  io.err(`> ${method} ${redactUrl(url)}`);
  headers.forEach((value, name) => io.err(`> ${name}: ${redactHeaderValue(name, value)}`));
  if (typeof body === 'string') io.err(`> ${redactBody(body, headers.get('content-type'))}`);
  else if (body instanceof URLSearchParams) io.err(`> ${redactBody(body.toString(), 'application/x-www-form-urlencoded')}`);
  else if (body) io.err('> <streamed body>');
}

async function traceResponse(io: IO, response: Response, ms: number): Promise<void> {
  io.err(`< ${response.status} ${response.statusText} (${ms} ms)`);
  response.headers.forEach((value, name) => io.err(`< ${name}: ${redactHeaderValue(name, value)}`));
  const type = response.headers.get('content-type') ?? '';
  const length = Number(response.headers.get('content-length') ?? NaN);
  // Only small JSON/form bodies are traced (OAuth responses), and only redacted; API bodies go to stdout anyway.
  if ((type.includes('json') || type.includes('x-www-form-urlencoded')) && length <= TRACE_BODY_LIMIT) {
    try {
      const text = await response.clone().text();
      io.err(`< ${redactBody(text, type)}`);
    } catch {
      // a body that cannot be read twice is simply not traced
    }
  }
}

/** A Response whose body fails once it exceeds `max` bytes: a hostile server cannot make plat buffer gigabytes. */
function limitBody(response: Response, max: number, url: URL): Response {
  if (!response.body) return response;
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > max) {
    void response.body.cancel().catch(() => {});
    throw new PlatError(`The server at ${url.origin} sent a ${declared}-byte response where a small document was expected.`);
  }
  let seen = 0;
  const limited = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) {
          controller.error(
            new PlatError(`The server at ${url.origin} sent more than ${max} bytes where a small document was expected.`),
          );
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  const copy = new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(copy, 'url', { value: response.url });
  return copy;
}

const CODE_MESSAGES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  ENOTFOUND: 'the host name could not be resolved',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'the server did not answer in time',
  UND_ERR_BODY_TIMEOUT: 'the server stopped sending the response',
  UND_ERR_SOCKET: 'the connection was closed unexpectedly',
  UND_ERR_CLOSED: 'the connection was closed unexpectedly',
  UND_ERR_HEADERS_OVERFLOW: 'the server sent response headers that are too large',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'the server sent a response that is too large',
};

/** Turns whatever undici threw into a sentence with the contract's exit code. */
export function toNetworkError(error: unknown, url: URL, interrupt?: AbortSignal): PlatError {
  if (error instanceof PlatError) return error;
  if (interrupt?.aborted) return new InterruptedError();
  const err = error as { name?: string; code?: string; cause?: { code?: string; name?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.cause?.name === 'TimeoutError') {
    return new NetworkError(`The request to ${url.origin} timed out. Check the network, or raise --timeout.`, { cause: error });
  }
  if (err?.name === 'AbortError') return new InterruptedError();
  const code = err?.cause?.code ?? err?.code ?? '';
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) {
    return new NetworkError(
      `Could not establish a trusted TLS connection to ${url.origin} (${code}). If the server uses a private CA, set NODE_EXTRA_CA_CERTS to its certificate.`,
      { cause: error },
    );
  }
  const what = CODE_MESSAGES[code] ?? (code ? `network error ${code}` : 'the request failed');
  return new NetworkError(`Could not reach ${url.origin}: ${what}. Check the base URL and your network (or proxy settings).`, {
    cause: error,
    code: code || undefined,
  });
}
