/**
 * A hostile server on its own origin (127.0.0.1, a port of its own): it answers what a test tells it to and logs
 * every request it receives — method, path, Authorization header and body — so a test can prove which secret
 * reached which origin by reading the server's own log.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface HostileRequest {
  method: string;
  path: string;
  authorization?: string;
  /** Every header as received (lower-case names). */
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type HostileHandler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export interface Hostile {
  readonly baseUrl: string;
  readonly log: HostileRequest[];
  /** Answers requests whose path starts with `prefix` (the latest registration wins). */
  on(prefix: string, handler: HostileHandler): void;
  /** Every logged request that carries one of `secrets` anywhere (any header, or the body). */
  leaks(secrets: string[]): HostileRequest[];
  reset(): void;
  close(): Promise<void>;
}

/** `maxHeaderSize`: what a request line and headers may hold (Node's default 16 KiB; more for megabyte cursors). */
export async function startHostile(options: { maxHeaderSize?: number } = {}): Promise<Hostile> {
  const log: HostileRequest[] = [];
  let handlers: Array<[string, HostileHandler]> = [];
  const server = http.createServer({ maxHeaderSize: options.maxHeaderSize }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      log.push({ method: req.method ?? 'GET', path, authorization: req.headers.authorization, headers: req.headers, body });
      const handler = handlers.find(([prefix]) => path.startsWith(prefix))?.[1];
      if (handler) return handler(req, res, body);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not_found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    log,
    on: (prefix, handler) => {
      handlers = [[prefix, handler], ...handlers];
    },
    leaks: (secrets) => log.filter((r) => secrets.some((s) => s && (JSON.stringify(r.headers).includes(s) || r.body.includes(s)))),
    reset: () => {
      log.length = 0;
      handlers = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const sendJson = (status: number, value: unknown, headers: Record<string, string> = {}): HostileHandler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
};
