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
  signal?: AbortSignal;
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

export interface Transport {
  send(request: HttpRequest & { headers: Record<string, string> }, signal: AbortSignal | undefined): Promise<HttpResponse>;
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
}

export function statusText(status: number, given?: string): string {
  return given || STATUS_CODES[status] || '';
}
