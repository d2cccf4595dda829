/**
 * What the proxy's server does with the connections themselves, before and around any request: nothing a local
 * process does to a connection ends the proxy or stalls its caller.
 * - Every socket has an error listener from the moment it is accepted, which stays when Node hands the socket over
 *   (a CONNECT, an upgrade) and drops its own: a reset at any point is a client going away, nothing more.
 * - Deadlines: a request's headers within HEADERS_DEADLINE_MS of the connection (or of the previous answer), an
 *   idle keep-alive connection closed after KEEP_ALIVE_MS, a connection with no request in flight closed after
 *   IDLE_MS of silence. A request in flight is the forwarder's (its own deadlines), never cut here.
 * - Room for the caller: at most WAITING_CAP connections may wait without a request in flight (connected and silent,
 *   sending headers a byte at a time, idle between requests). One more evicts the one that has waited longest, so a
 *   new connection (the caller's) is always taken and served, however many slow ones are held open, and the proxy
 *   never runs out of file descriptors to them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Connections without a request in flight that may be held at once; far below the usual 1024 descriptors. */
const WAITING_CAP = 256;
/** A local program sends its headers at once: this is for the one that never finishes them. */
const HEADERS_DEADLINE_MS = 10_000;
/** Until a whole request has arrived (a streamed upload included): the forwarder's exchange deadline. */
const REQUEST_DEADLINE_MS = 60 * 60_000;
const KEEP_ALIVE_MS = 5_000;
/** Silence on a connection with no request in flight. */
const IDLE_MS = 30_000;
/** How often Node looks for connections past the header and request deadlines. */
const CHECK_EVERY_MS = 1_000;

/** The server options that set the deadlines above. */
export const serverDeadlines = {
  headersTimeout: HEADERS_DEADLINE_MS,
  requestTimeout: REQUEST_DEADLINE_MS,
  keepAliveTimeout: KEEP_ALIVE_MS,
  connectionsCheckingInterval: CHECK_EVERY_MS,
} as const;

const ignore = () => {};

/** Guards `server`'s connections as above; call before it listens. */
export function guardConnections(server: Server): void {
  // Insertion order is the order they began to wait: the first is the one that has waited longest.
  const waiting = new Set<Socket>();
  const wait = (socket: Socket) => {
    if (socket.destroyed) return;
    waiting.delete(socket);
    while (waiting.size >= WAITING_CAP) {
      const oldest = waiting.values().next().value as Socket;
      waiting.delete(oldest);
      oldest.destroy();
    }
    waiting.add(socket);
  };

  server.on('connection', (socket: Socket) => {
    socket.on('error', ignore);
    socket.once('close', () => waiting.delete(socket));
    wait(socket);
  });
  // Requests in flight on each connection (more than one when a client pipelines them).
  const inFlight = new WeakMap<Socket, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    waiting.delete(socket);
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    // Its last answer done: the connection waits for its next request (keep-alive) or its close.
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (left === 0) wait(socket);
    });
  });
  server.setTimeout(IDLE_MS);
  server.on('timeout', (socket: Socket) => {
    if (waiting.has(socket)) socket.destroy();
  });
}

/**
 * A socket Node handed over (CONNECT, an upgrade, a client error) that the proxy answers once and closes: what the
 * client sends meanwhile is read and dropped, so its close is seen, and it is gone within a few seconds whatever the
 * client does.
 */
export function closeHandedOver(socket: Socket, text: string): void {
  socket.on('error', ignore);
  socket.setTimeout(5_000, () => socket.destroy());
  socket.resume();
  if (socket.writable) socket.end(text);
  else socket.destroy();
}
