/**
 * A request built from a batch-shaped object or an operation (request-object.ts, operation.ts) as the session sends
 * it, written once for plat batch's lines, client.batch() and plat mcp's two tools: its JSON body handed over per
 * attempt, and whatever the caller adds (an MCP tool's deadline and cancellation).
 */
import type { ApiRequest } from '../session/index.js';

/** What a builder gives: the method, the absolute URL, the headers (the header rule already applied), a JSON body. */
export interface BuiltRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  jsonBody?: string;
}

export function apiRequestOf(built: BuiltRequest, extra: Pick<ApiRequest, 'timeoutMs' | 'signal'> = {}): ApiRequest {
  const { method, url, headers, jsonBody } = built;
  return { method, url, headers, body: jsonBody === undefined ? undefined : () => jsonBody, ...extra };
}
