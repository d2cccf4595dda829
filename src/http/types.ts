/**
 * What the HTTP client (index.ts) and its two transports (node.ts, undici.ts) share: the request and response
 * shapes and the status line. A module of its own so the transports never import the client that loads them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Readable } from 'node:stream';

export interface HttpRequest {
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: string | Uint8Array | Readable;
  /** Ends this request alone (a caller's own cancellation or deadline); Ctrl-C is the client's, not the request's. */
  signal?: AbortSignal;
  /**
   * The whole request, body included, ends after this many milliseconds with a TimeoutError (`timeoutError()`), as
   * an `AbortSignal.timeout()` would end it, without a signal and a ten-minute timer per request.
   */
  timeoutMs?: number;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  /** Lower-case names; repeated headers joined with ", " (set-cookie kept as a list). */
  headers: IncomingHttpHeaders;
  /** Header lines as received, for `plat call -i`. */
  rawHeaders: string[];
  body: Readable;
}

/**
 * One way of sending requests. A transport is made with the client's interrupt signal (Ctrl-C), which ends every
 * request it has in flight, response bodies included; each request may carry its own `signal` and `timeoutMs`.
 */
export interface Transport {
  send(request: HttpRequest & { headers: Record<string, string> }): Promise<HttpResponse>;
  /**
   * Ends the connections it opened. `exiting`: the process ends next, so idle keep-alive connections (which never
   * hold the process) are left to end with it, and only those still in use are closed.
   */
  close(options?: { exiting?: boolean }): Promise<void>;
}

export interface Timeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  /** How long a kept-alive connection may sit unused (node.ts; default 5 s). */
  keepAliveMs?: number;
}

/** What a request's deadline ends it with: the reason `AbortSignal.timeout()` gives, so every reader says "timed out". */
export function timeoutError(): Error {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

export function statusText(status: number, given?: string): string {
  return given || STATUS_CODES[status] || '';
}
