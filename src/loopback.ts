/**
 * The one-shot redirect listener of a native-app login (RFC 8252 §7.3): bound to 127.0.0.1 only, it answers
 * every path, hands over the first callback that carries the expected `state`, shows the browser a page (never a
 * code or token), and closes. Requests with the wrong state are refused and ignored, so a stray or forged request
 * cannot end the login.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PlatError } from './errors.js';

export const CALLBACK_PATH = '/callback';

export interface Callback {
  url: URL;
  /** Answers the browser that delivered it (a no-op for a pasted URL). */
  respond(page: Page): void;
}

interface Page {
  ok: boolean;
  title: string;
  message: string;
}

export interface LoopbackListener {
  readonly port: number;
  readonly redirectUri: string;
  /** The first callback with the right state, whether it came to the listener or was pasted. */
  readonly callback: Promise<Callback>;
  /**
   * Offers a URL the user pasted (the address a browser on another machine ended on); returns false, and changes
   * nothing, unless it is this listener's redirect URI with this login's state.
   */
  offer(url: URL): boolean;
  close(): Promise<void>;
}

export async function startLoopback(options: { port?: number; expectedState: string }): Promise<LoopbackListener> {
  let deliver!: (callback: Callback) => void;
  const callback = new Promise<Callback>((resolve) => (deliver = resolve));
  let delivered = false;

  const matches = (url: URL) => url.pathname === CALLBACK_PATH && url.searchParams.get('state') === options.expectedState;

  // Node enforces headersTimeout/requestTimeout only when it checks connections (every 30 s by default): check
  // every second, so that clients that trickle their headers are dropped after 5 s, not after half a minute.
  const server = createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, page(false, 'Method not allowed', 'plat only expects a browser redirect here.'));
    if (url.pathname !== CALLBACK_PATH) return send(res, 404, page(false, 'Not found', 'Nothing here. You can close this tab.'));
    if (!matches(url)) {
      return send(res, 400, page(false, 'Not this sign-in', 'This address does not belong to the sign-in plat is waiting for. Return to your terminal.'));
    }
    if (delivered) return send(res, 409, page(false, 'Already done', 'This sign-in was already completed. Return to your terminal.'));
    delivered = true;
    deliver({ url: absolute(url, port), respond: (p) => send(res, p.ok ? 200 : 400, page(p.ok, p.title, p.message)) });
  });
  // A slow or hostile local client must not hold the listener: short header and request deadlines, few sockets.
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 1_000;
  server.maxConnections = 32;

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const wanted = options.port ?? 0;
      if (error.code === 'EADDRINUSE') {
        reject(new PlatError(`Port ${wanted} on 127.0.0.1 is already in use. Pick another with --port, or leave --port out to use a free one.`));
      } else if (error.code === 'EACCES') {
        reject(new PlatError(`Not allowed to listen on port ${wanted} of 127.0.0.1. Pick a port above 1023 with --port.`));
      } else {
        reject(new PlatError(`Could not listen on 127.0.0.1:${wanted} for the sign-in callback (${error.code ?? error.message}).`));
      }
    });
    server.listen({ port: options.port ?? 0, host: '127.0.0.1', exclusive: true }, resolve);
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    callback,
    offer(url) {
      if (delivered || url.origin !== `http://127.0.0.1:${port}` || !matches(url)) return false;
      delivered = true;
      deliver({ url, respond: () => {} });
      return true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Give the browser its page, then drop whatever is still connected (keep-alive, slow clients).
        setTimeout(() => server.closeAllConnections(), 200).unref();
      }),
  };
}

function absolute(url: URL, port: number): URL {
  return new URL(`${url.pathname}${url.search}`, `http://127.0.0.1:${port}`);
}

function send(res: ServerResponse<IncomingMessage>, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  res.end(html);
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(ok: boolean, title: string, message: string): string {
  const colour = ok ? '#1a7f37' : '#cf222e';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>plat: ${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;background:#f6f8fa;color:#1f2328}
main{background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:2rem 2.5rem;max-width:32rem;text-align:center}
h1{font-size:1.4rem;color:${colour};margin:0 0 .5rem}p{margin:.25rem 0}</style></head>
<body><main><h1 id="result" data-ok="${ok}">${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`;
}
