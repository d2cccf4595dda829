/**
 * `plat proxy`, the library's `client.proxy()` and `plat exec --proxy`: a local HTTP server in front of the
 * session's platform, for any HTTP tool (curl, Python's requests, an SDK), which never sees a token. An adapter
 * like the library: the gate (gate.ts) decides who may use it, the forwarder (forward.ts) sends through the
 * session's front door, and this file listens, logs and closes.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from '../context.js';
import { PlatError, UsageError } from '../errors.js';
import { redactUrl } from '../redact.js';
import { sanitize, shellQuote } from '../terminal/text.js';
import { closeHandedOver, guardConnections, serverDeadlines } from './connections.js';
import { answer, Forwarder, type Outcome } from './forward.js';
import { judge, type GateOptions } from './gate.js';

/**
 * Each connection's buffer, each way (Node's default is 16 KiB): a download's chunks of one round of the event loop
 * go to the client in one writev (forward.ts, coalesceWrites) instead of a pause and a write per 16 KiB.
 */
const SOCKET_BUFFER_BYTES = 256 * 1024;

export interface ProxyOptions {
  /** A TCP port on 127.0.0.1 (0: any free one); ignored with `socket`. */
  port?: number;
  /** A unix socket path instead of TCP, made 0600. */
  socket?: string;
  allowWrite?: boolean;
  /** One redacted line per request on stderr. */
  log?: boolean;
}

export interface RunningProxy {
  /** `http://127.0.0.1:PORT/KEY/` over TCP; `http://localhost/` on a socket (with `socket` set). */
  readonly url: string;
  readonly socket: string | undefined;
  /** What `plat proxy` prints: one line of shell assignments, for eval. */
  readonly assignments: string;
  /**
   * Stops taking connections; requests in flight may finish for `graceMs` (default 2 s), then every connection is
   * closed. Resolves once none is left.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

export async function startProxy(ctx: Context, options: ProxyOptions = {}): Promise<RunningProxy> {
  const forwarder = new Forwarder(ctx, () => (gate.key === undefined ? '' : `/${gate.key}`));
  // Over TCP the key is made before the server listens, and the gate refuses everything until the Host it must name
  // is known too: no moment in which a request could pass without either.
  const tcp = options.socket === undefined;
  const gate: GateOptions = { tcp, key: tcp ? randomBytes(24).toString('base64url') : undefined, hosts: undefined, allowWrite: options.allowWrite === true };
  const notedOnce = new Set<string>();
  const noteOnce = (text: string) => {
    if (notedOnce.has(text)) return;
    notedOnce.add(text);
    ctx.io.note(text);
  };

  const server = createServer({ ...serverDeadlines, highWaterMark: SOCKET_BUFFER_BYTES }, (req, res) => {
    const started = process.hrtime.bigint();
    void handle(req, res).then(
      (outcome) => {
        if (outcome.dropped.authorization) noteOnce('A client sent its own Authorization header: the proxy dropped it and sent the session\'s token.');
        if (options.log) ctx.io.err(accessLine(req, outcome, started));
      },
      () => res.destroy(),
    );
  });
  guardConnections(server);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<Outcome> => {
    const verdict = judge(req, gate);
    if (!verdict.ok) {
      req.resume();
      // A refused request whose body is still coming is not waited for: the connection ends with the answer.
      const extra = { ...(verdict.allow ? { allow: verdict.allow } : {}), ...(req.complete ? {} : { connection: 'close' }) };
      return { ...answer(res, verdict.status, verdict.error, verdict.message, extra), dropped: {} };
    }
    try {
      return await forwarder.forward(req, res, verdict.path);
    } catch (error) {
      return { ...answer(res, 500, 'proxy_error', `Unexpected failure in plat proxy: ${sanitize((error as Error)?.message, 200)}.`), dropped: {} };
    }
  };

  // CONNECT would make the proxy a tunnel to wherever the client names; an Upgrade (WebSocket) is no HTTP exchange
  // the session's path can carry. Both are refused on the raw socket, nothing forwarded, and the socket is closed
  // whatever the client does next (connections.ts).
  const refuseRaw = (status: string, error: string, message: string) => (req: IncomingMessage, socket: Socket) => {
    closeHandedOver(socket, rawAnswer(status, error, message));
    if (options.log) ctx.io.err(`proxy: ${sanitize(req.method, 20)} refused: ${error}`);
  };
  server.on('connect', refuseRaw('405 Method Not Allowed', 'connect_refused', 'plat proxy is no tunnel: CONNECT is refused. Send requests to the PLAT_PROXY_URL it printed.'));
  server.on('upgrade', refuseRaw('501 Not Implemented', 'upgrade_refused', 'plat proxy does not carry protocol upgrades (WebSocket).'));
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket & { _httpMessage?: ServerResponse | null }) => {
    const text = clientErrorAnswer(error);
    // An answer already begun on this connection (an upload past its deadline while the platform answers) is not
    // interrupted by another: the connection is only closed (Node's own rule, on the field it uses for it).
    if (text === undefined || socket._httpMessage?.headersSent) socket.destroy();
    else closeHandedOver(socket, text);
  });

  let url: string;
  let assignments: string;
  if (options.socket !== undefined) {
    await listenOnSocket(server, options.socket);
    url = 'http://localhost/';
    assignments = `PLAT_PROXY_SOCKET=${shellQuote(options.socket)} PLAT_PROXY_URL=${shellQuote(url)}`;
  } else {
    await listenOnLoopback(server, options.port ?? 0);
    const { port } = server.address() as { port: number };
    gate.hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
    url = `http://127.0.0.1:${port}/${gate.key}/`;
    assignments = `PLAT_PROXY_URL=${shellQuote(url)}`;
  }

  // Listening: an error from here on (accept failing for want of descriptors) is said once, and the proxy goes on.
  server.removeAllListeners('error');
  server.on('error', (error: NodeJS.ErrnoException) => noteOnce(`plat proxy could not take a connection (${error.code ?? error.message}); it goes on serving the others.`));

  let closing: Promise<void> | undefined;
  const close = (closeOptions: { graceMs?: number } = {}) =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => {
        clearTimeout(timer);
        if (options.socket !== undefined) removeSocket(options.socket);
        resolve();
      });
      server.closeIdleConnections();
      // A request that finishes within the grace period is answered whole; what is left then is closed.
      const timer = setTimeout(() => server.closeAllConnections(), closeOptions.graceMs ?? 2_000);
      timer.unref();
    }));

  return { url, socket: options.socket, assignments, close };
}

/** A whole HTTP/1.1 answer in the proxy's own name, for a socket Node handed over; the connection closes after it. */
function rawAnswer(status: string, error: string, message: string): string {
  const body = `${JSON.stringify({ error, message })}\n`;
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`;
}

/**
 * What to answer a request Node could not parse, or undefined to close without a word: a client that reset, or a
 * TLS client on the plain port (its hello starts with byte 0x16; it could not read an HTTP answer anyway).
 */
function clientErrorAnswer(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): string | undefined {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE') return undefined;
  if (error.rawPacket?.[0] === 0x16) return undefined;
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawAnswer('408 Request Timeout', 'request_timeout', 'The request did not arrive in time (its headers are due within 10 s, the whole of it within an hour): the connection is closed.');
    case 'HPE_INVALID_METHOD':
      return rawAnswer('501 Not Implemented', 'unknown_method', 'The proxy does not know this request\'s method: nothing was forwarded.');
    case 'HPE_HEADER_OVERFLOW':
      return rawAnswer('431 Request Header Fields Too Large', 'headers_too_large', 'The request\'s headers are too large: nothing was forwarded.');
    default:
      return rawAnswer('400 Bad Request', 'bad_request', 'The proxy could not read this as an HTTP/1.1 request: nothing was forwarded.');
  }
}

/** `proxy: GET https://platform/api/courses → 200 (3 ms)`, the query's secrets redacted, the key never shown. */
function accessLine(req: IncomingMessage, outcome: Outcome, started: bigint): string {
  const ms = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
  const target = outcome.url ? sanitize(redactUrl(outcome.url), 300) : '(not forwarded)';
  const notes = [
    outcome.error ? `proxy's own answer: ${outcome.error}` : '',
    outcome.dropped.authorization ? "the client's Authorization header dropped" : '',
    outcome.dropped.cookies ? 'Set-Cookie dropped' : '',
    outcome.dropped.cors ? 'Access-Control-* dropped' : '',
    outcome.dropped.echoedToken ? 'a header that echoed the token dropped' : '',
  ].filter(Boolean);
  const status = outcome.status === 0 ? 'closed' : String(outcome.status);
  return `proxy: ${sanitize(req.method, 20)} ${target} → ${status} (${ms.toFixed(1)} ms)${notes.length ? `; ${notes.join('; ')}` : ''}`;
}

function listenOnLoopback(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new PlatError(`Port ${port} on 127.0.0.1 is in use: choose another with --port, or --port 0 for any free one.`)
          : new PlatError(`plat proxy could not listen on 127.0.0.1:${port} (${error.code ?? error.message}).`),
      ),
    );
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve());
  });
}

/**
 * A unix socket only its owner can connect to: made under a umask that leaves no access for others, so there is no
 * moment when it exists with wider rights, then set to 0600 explicitly (the umask may have been stricter).
 */
function listenOnSocket(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new PlatError(`${path} already exists: remove it (if no proxy is using it) or choose another --socket path.`)
          : new UsageError(`plat proxy could not make the socket ${path} (${error.code ?? error.message}): check that its directory exists and is yours.`),
      ),
    );
    const previous = process.umask(0o177);
    try {
      server.listen({ path, exclusive: true }, () => {
        try {
          chmodSync(path, 0o600);
          resolve();
        } catch (error) {
          server.close();
          reject(new PlatError(`plat proxy could not make ${path} private (${(error as NodeJS.ErrnoException).code}).`));
        }
      });
    } finally {
      process.umask(previous);
    }
  });
}

function removeSocket(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already (Node removes it on close)
  }
}


