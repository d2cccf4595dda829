/**
 * Requests over Node's built-in http/https: no proxy, keep-alive (a paginated call makes thousands of requests to
 * one origin; a new connection per page cost ~0.2 ms of plat's CPU each; idle sockets do not keep the process
 * alive, and close() ends them), explicit connect, header and body-idle deadlines that fail with the same codes
 * undici uses, so one mapping explains them all, and each request's own deadline (timeoutMs) on the same timer.
 * A paginated run makes a request per page, so what each one costs is kept small: no AbortSignal per request, one
 * timer, and one Ctrl-C listener for all the requests in flight (AbortSignal.timeout + AbortSignal.any and two abort
 * listeners per request cost 0.11-0.17 ms of CPU a page, with the GC work of their ten-minute timers).
 */
import type * as dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type * as https from 'node:https';
import { Readable } from 'node:stream';
import { statusText, timeoutError, type HttpResponse, type Timeouts, type Transport } from './types.js';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

/** A clock for deadlines that no change of the system time moves; not `performance.now()`, whose first use loads
 *  perf_hooks (~1 ms of every start). */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Plain http is for loopback only, and a name is not an address (RFC 8252 §8.3): `school.localhost` may resolve
 * anywhere. A name looked up for an http:// request must resolve to loopback addresses only, checked on the
 * addresses the socket will use, so no request (and no token) leaves the machine unencrypted.
 */
function loopbackOnlyLookup(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  // node:dns is loaded here, not at start-up: a request to an IP literal (the usual loopback case) never needs it.
  (process.getBuiltinModule('node:dns') as typeof dns).lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    const outside = list.find((a) => !isLoopbackAddress(a.address));
    if (outside || list.length === 0) {
      const refused = Object.assign(coded(`${hostname} resolves to ${outside?.address ?? 'no address'}, not a loopback address`, 'ERR_PLAT_NOT_LOOPBACK'), { address: outside?.address });
      return callback(refused, []);
    }
    if (options.all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}

function isLoopbackAddress(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
}

/**
 * Idle connections close after 5 s (the agent destroys a free socket when this timeout fires): the library makes a
 * context, and so an agent, per call and never disposes it, so its idle sockets must not wait for the server. The
 * same timer, running while a socket is in use, is the first part of the body-idle deadline (below).
 */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export function nodeTransport(timeouts: Timeouts, interrupt?: AbortSignal): Transport {
  const keepAlive = { keepAlive: true, timeout: timeouts.keepAliveMs ?? KEEP_ALIVE_TIMEOUT_MS };
  const agents: { http?: Agent; https?: https.Agent } = {};
  const agentFor = (protocol: string) =>
    protocol === 'https:'
      ? (agents.https ??= new (require('node:https') as typeof https).Agent(keepAlive))
      : (agents.http ??= new Agent(keepAlive));
  const inFlight = new InFlight(interrupt);
  return {
    send: (req) =>
      new Promise<HttpResponse>((resolve, reject) => {
        if (interrupt?.aborted) return reject(interrupt.reason);
        const own = req.signal;
        if (own?.aborted) return reject(own.reason);
        // https (and so tls) is loaded only for https URLs: it is the heaviest part of Node's network stack.
        const make = req.url.protocol === 'https:' ? (require('node:https') as typeof https).request : httpRequest;
        const client: ClientRequest = make(req.url, {
          method: req.method,
          headers: req.headers,
          agent: agentFor(req.url.protocol),
          maxHeaderSize: 64 * 1024,
          ...(req.url.protocol === 'http:' ? { lookup: loopbackOnlyLookup } : {}),
        });
        const deadlineAt = req.timeoutMs === undefined ? Infinity : monotonicMs() + req.timeoutMs;
        let response: IncomingMessage | undefined;
        let settled = false;
        // One timer per request, unref'd (the socket keeps plat alive while it is needed): first for the headers
        // deadline, or the request's own deadline when that comes sooner; the request's deadline is armed in its
        // place only if the headers deadline passes while the body is still arriving, so a page that is done within
        // 30 s costs one timer.
        let timer: NodeJS.Timeout | undefined;
        let timerIsDeadline = false;
        const arm = (ms: number, isDeadline: boolean) => {
          timerIsDeadline = isDeadline;
          timer = setTimeout(onTimer, ms).unref();
        };
        // Ends the exchange where it is: before the headers the promise rejects; after, the body fails with `error`,
        // where its reader sees it.
        const end = (error: Error) => {
          if (response) {
            response.destroy(error);
          } else {
            client.destroy(error);
            fail(error);
          }
        };
        function onTimer() {
          timer = undefined;
          if (timerIsDeadline) end(timeoutError());
          else if (!response) client.destroy(coded('no response headers in time', 'UND_ERR_HEADERS_TIMEOUT'));
          else if (deadlineAt !== Infinity) arm(Math.max(0, deadlineAt - monotonicMs()), true);
        }
        const onOwnAbort = () => end(own!.reason as Error);
        let idleCheck: NodeJS.Timeout | undefined;
        const finish = () => {
          clearTimeout(timer);
          clearTimeout(idleCheck);
          inFlight.delete(end);
          own?.removeEventListener('abort', onOwnAbort);
        };
        const fail = (error: unknown) => {
          if (settled) return;
          settled = true;
          finish();
          reject(error);
        };
        if (req.timeoutMs !== undefined && req.timeoutMs <= timeouts.headersMs) arm(req.timeoutMs, true);
        else arm(timeouts.headersMs, false);
        inFlight.add(end);
        own?.addEventListener('abort', onOwnAbort, { once: true });
        client.on('socket', (socket) => {
          if (!socket.connecting) return;
          const connectTimer = setTimeout(() => client.destroy(coded('connect timed out', 'UND_ERR_CONNECT_TIMEOUT')), timeouts.connectMs);
          socket.once('connect', () => clearTimeout(connectTimer));
          socket.once('secureConnect', () => clearTimeout(connectTimer));
          socket.once('close', () => clearTimeout(connectTimer));
        });
        client.on('error', fail);
        client.on('response', (res: IncomingMessage) => {
          settled = true;
          response = res;
          const bodyTimedOut = () => res.destroy(coded('body timed out', 'UND_ERR_BODY_TIMEOUT'));
          // The body-idle deadline. res.setTimeout() would set the socket's idle timer to it, and the agent would set
          // it back to the keep-alive timeout when the socket is freed: two new timers per request. Instead the
          // socket keeps the agent's shorter timer, whose 'timeout' says the body has been silent that long; one
          // timer then waits out the rest, and fails the body only if no byte moved meanwhile.
          const socket = res.socket!;
          const quietMs = socket.timeout ?? 0;
          if (quietMs > 0 && quietMs < timeouts.bodyMs) {
            res.on('timeout', () => {
              clearTimeout(idleCheck);
              const moved = socket.bytesRead + socket.bytesWritten;
              idleCheck = setTimeout(() => {
                if (socket.bytesRead + socket.bytesWritten === moved) bodyTimedOut();
              }, timeouts.bodyMs - quietMs).unref();
            });
          } else {
            res.setTimeout(timeouts.bodyMs, bodyTimedOut);
          }
          // The exchange lasts until its body is done: the timer, Ctrl-C and the caller's signal go with it.
          res.once('close', finish);
          resolve({
            status: res.statusCode ?? 0,
            statusText: statusText(res.statusCode ?? 0, res.statusMessage),
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: res,
          });
        });
        const { body } = req;
        if (body instanceof Readable) {
          body.on('error', (error) => client.destroy(error));
          body.pipe(client);
        } else {
          client.end(body);
        }
      }),
    close: async ({ exiting = false } = {}) => {
      for (const agent of [agents.http, agents.https]) {
        if (!agent) continue;
        if (!exiting) {
          agent.destroy();
          continue;
        }
        // The agent unrefs idle sockets, so they never keep the process alive; destroying them would build
        // process.stderr for nothing (net.Socket's destroy compares itself with it): 2-3 ms on a quiet run.
        for (const sockets of Object.values(agent.sockets)) for (const socket of sockets ?? []) socket.destroy();
      }
    },
  };
}

/**
 * The requests in flight (until their bodies are done), for Ctrl-C: one listener on the interrupt signal for all
 * of them, where one per request cost a listener added and removed per page of a paginated run. It stays while
 * requests keep coming, and goes once the transport has been idle for a turn of the event loop, so a context
 * that is never closed (the library makes one per call) leaves nothing on a signal that outlives it.
 */
class InFlight {
  private readonly ends = new Set<(reason: Error) => void>();
  private listening = false;
  private releasing = false;
  constructor(private readonly signal: AbortSignal | undefined) {}

  private readonly onAbort = () => {
    for (const end of this.ends) end(this.signal!.reason as Error);
  };

  private readonly release = () => {
    this.releasing = false;
    if (this.ends.size > 0 || !this.listening) return;
    this.listening = false;
    this.signal!.removeEventListener('abort', this.onAbort);
  };

  add(end: (reason: Error) => void): void {
    if (!this.signal) return;
    this.ends.add(end);
    if (this.listening) return;
    this.listening = true;
    this.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  delete(end: (reason: Error) => void): void {
    if (!this.signal || !this.ends.delete(end) || this.ends.size > 0 || this.releasing) return;
    this.releasing = true;
    setImmediate(this.release);
  }
}
