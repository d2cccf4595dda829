/**
 * Requests through undici's EnvHttpProxyAgent, used only when HTTP(S)_PROXY is set: it tunnels through the proxy,
 * honours NO_PROXY, and is worth its load time only then.
 */
import { EnvHttpProxyAgent, request } from 'undici';
import { statusText, type HttpResponse, type Timeouts, type Transport } from './types.js';

export function undiciTransport(timeouts: Timeouts, interrupt?: AbortSignal): Transport {
  const dispatcher = new EnvHttpProxyAgent({
    connectTimeout: timeouts.connectMs,
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
  });
  return {
    send: async (req): Promise<HttpResponse> => {
      // undici takes one signal for the request and its body: Ctrl-C, the caller's and the deadline, combined (a
      // proxy's round trips dwarf what the signals cost; the direct transport, node.ts, does without them).
      const deadline = req.timeoutMs === undefined ? undefined : AbortSignal.timeout(req.timeoutMs);
      const signals = [interrupt, req.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
      const response = await request(req.url, {
        method: req.method as 'GET',
        headers: req.headers,
        body: req.body,
        signal,
        dispatcher,
      });
      const rawHeaders: string[] = [];
      for (const [name, value] of Object.entries(response.headers)) {
        for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) rawHeaders.push(name, v);
      }
      return {
        status: response.statusCode,
        statusText: statusText(response.statusCode),
        headers: response.headers,
        rawHeaders,
        body: response.body,
      };
    },
    close: () => dispatcher.close(),
  };
}
