/**
 * Requests over Node's built-in http/https: no proxy, keep-alive (a paginated call makes thousands of requests to
 * one origin; a new connection per page cost ~0.2 ms of plat's CPU each; idle sockets do not keep the process
 * alive, and close() ends them), explicit connect,
 * header and body-idle deadlines that fail with the same codes undici uses, so one mapping explains them all.
 */
import type * as dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type * as https from 'node:https';
import { Readable } from 'node:stream';
import { statusText, type HttpResponse, type Timeouts, type Transport } from './types.js';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

/**
 * Plain http is for loopback only, and a name is not an address (RFC 8252 §8.3): `school.localhost` may resolve
 * anywhere. A name looked up for an http:// request must resolve to loopback addresses only, checked on the
 * addresses the socket will use, so no request (and no token) leaves the machine unencrypted.
 */
export function loopbackOnlyLookup(
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
      return callback(coded(`${hostname} resolves to ${outside?.address ?? 'no address'}, not a loopback address`, 'ERR_PLAT_NOT_LOOPBACK'), []);
    }
    if (options.all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}

export function isLoopbackAddress(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
}

/**
 * Idle connections close after 5 s (the agent destroys a free socket when this timeout fires): the library makes a
 * context, and so an agent, per call and never disposes it, so its idle sockets must not wait for the server.
 */
const KEEP_ALIVE = { keepAlive: true, timeout: 5_000 };

export function nodeTransport(timeouts: Timeouts): Transport {
  const agents: { http?: Agent; https?: https.Agent } = {};
  const agentFor = (protocol: string) =>
    protocol === 'https:'
      ? (agents.https ??= new (require('node:https') as typeof https).Agent(KEEP_ALIVE))
      : (agents.http ??= new Agent(KEEP_ALIVE));
  return {
    send: (req, signal) =>
      new Promise<HttpResponse>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        // https (and so tls) is loaded only for https URLs: it is the heaviest part of Node's network stack.
        const make = req.url.protocol === 'https:' ? (require('node:https') as typeof https).request : httpRequest;
        const client: ClientRequest = make(req.url, {
          method: req.method,
          headers: req.headers,
          agent: agentFor(req.url.protocol),
          maxHeaderSize: 64 * 1024,
          ...(req.url.protocol === 'http:' ? { lookup: loopbackOnlyLookup } : {}),
        });
        let settled = false;
        const fail = (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(headersTimer);
          reject(error);
        };
        const onAbort = () => {
          client.destroy(signal!.reason as Error);
          fail(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const headersTimer = setTimeout(() => client.destroy(coded('no response headers in time', 'UND_ERR_HEADERS_TIMEOUT')), timeouts.headersMs);
        client.on('socket', (socket) => {
          if (!socket.connecting) return;
          const connectTimer = setTimeout(() => client.destroy(coded('connect timed out', 'UND_ERR_CONNECT_TIMEOUT')), timeouts.connectMs);
          socket.once('connect', () => clearTimeout(connectTimer));
          socket.once('secureConnect', () => clearTimeout(connectTimer));
          socket.once('close', () => clearTimeout(connectTimer));
        });
        client.on('error', fail);
        client.on('response', (res: IncomingMessage) => {
          clearTimeout(headersTimer);
          settled = true;
          res.setTimeout(timeouts.bodyMs, () => res.destroy(coded('body timed out', 'UND_ERR_BODY_TIMEOUT')));
          // An abort after the headers ends the body stream, where the consumer sees it.
          const onBodyAbort = () => res.destroy(signal!.reason as Error);
          signal?.addEventListener('abort', onBodyAbort, { once: true });
          // Both listeners go with the response: a paginated run makes thousands of requests on one signal.
          res.once('close', () => {
            signal?.removeEventListener('abort', onAbort);
            signal?.removeEventListener('abort', onBodyAbort);
          });
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
