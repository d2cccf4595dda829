// Drives the platform's consent page over plain HTTP, the way a user's browser would: a cookie jar, manual
// redirects, then a post of the Approve or Deny form. Shared by Platform.approve() and approve-browser.mjs, and
// deliberately free of oidc-provider imports so the browser command starts fast.

import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';

const MAX_HOPS = 20;

/**
 * @typedef {{ status: number, headers: import('node:http').IncomingHttpHeaders, body: string }} RawResponse
 */

/**
 * Minimal HTTP client: no redirect following, no body decoding beyond UTF-8. Plain node:http keeps the
 * exchange fully visible (every Set-Cookie, every Location) and avoids any connection pooling between runs.
 * `ca`: the certificate(s) to trust for an https platform with a private CA (tests' TLS platform).
 * @param {URL} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string, ca?: string }} [init]
 * @returns {Promise<RawResponse>}
 */
function send(url, init = {}) {
  return new Promise((resolve, reject) => {
    const tls = url.protocol === 'https:';
    const req = (tls ? httpsRequest : request)(
      url,
      {
        method: init.method ?? 'GET',
        headers: { ...init.headers, connection: 'close' },
        agent: false,
        ...(tls && init.ca ? { ca: init.ca } : {}),
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error(`timed out waiting for ${url.origin}${url.pathname}`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Name-keyed cookie jar for one origin; enough for oidc-provider's _session/_interaction cookies. */
class CookieJar {
  /** @type {Map<string, string>} */
  #cookies = new Map();

  /** @param {import('node:http').IncomingHttpHeaders} headers */
  store(headers) {
    const raw = headers['set-cookie'] ?? [];
    for (const line of raw) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((attr) => {
        const [k = '', v = ''] = attr.trim().split('=');
        const key = k.toLowerCase();
        if (key === 'max-age') return Number(v) <= 0;
        if (key === 'expires') return Date.parse(v) <= Date.now();
        return false;
      });
      if (expired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header() {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * One request as a browser makes it: the jar's cookies sent, the answer's stored.
 * @param {CookieJar} jar @param {URL} url @param {{ method: string, body?: string, contentType?: string }} next
 * @param {string} [ca]
 */
async function browse(jar, url, next, ca) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'text/html' };
  const cookie = jar.header();
  if (cookie) headers.cookie = cookie;
  if (next.contentType) headers['content-type'] = next.contentType;
  const res = await send(url, { method: next.method, headers, ca, ...(next.body !== undefined ? { body: next.body } : {}) });
  jar.store(res.headers);
  return res;
}

/** @param {string} html */
function textOf(html) {
  return html
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** @param {string} s */
function decodeEntities(s) {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Finds the consent form and the chosen button in the page, as a browser would submit it.
 * @param {string} html
 * @param {'approve' | 'deny'} buttonId
 */
function parseConsentForm(html, buttonId) {
  const form = /<form\b[^>]*\bmethod="post"[^>]*\baction="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error('consent page has no POST form');
  const [, action = '', inner = ''] = form;
  const fields = new URLSearchParams();
  for (const m of inner.matchAll(/<input\b[^>]*type="hidden"[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/.exec(m[0])?.[1];
    const value = /\bvalue="([^"]*)"/.exec(m[0])?.[1] ?? '';
    if (name) fields.append(decodeEntities(name), decodeEntities(value));
  }
  const button = new RegExp(`<button\\b[^>]*\\bid="${buttonId}"[^>]*>`, 'i').exec(inner)?.[0];
  if (!button) throw new Error(`consent page has no #${buttonId} button`);
  const name = /\bname="([^"]*)"/.exec(button)?.[1];
  const value = /\bvalue="([^"]*)"/.exec(button)?.[1] ?? '';
  if (name) fields.append(decodeEntities(name), decodeEntities(value));
  return { action: decodeEntities(action), fields };
}

/** Paths served by the authorization server's browser-facing side; anything else is the client's redirect. */
function isPlatformHop(/** @type {URL} */ url, /** @type {URL} */ start) {
  return (
    url.origin === start.origin &&
    (url.pathname.startsWith('/oauth/authorize') || url.pathname.startsWith('/interaction/'))
  );
}

/**
 * Follows the authorization request through the consent page and returns the address the authorization
 * server finally redirects to (the client's redirect_uri with code/error, state and iss), without requesting it.
 * @param {string} authorizeUrl
 * @param {{ deny?: boolean, ca?: string }} [options]  ca: trust this PEM for an https platform
 * @returns {Promise<string>}
 */
export async function driveConsent(authorizeUrl, options = {}) {
  const start = new URL(authorizeUrl);
  const jar = new CookieJar();
  let url = start;
  /** @type {{ method: string, body?: string, contentType?: string }} */
  let next = { method: 'GET' };
  let submitted = false;

  for (let hop = 0; hop < MAX_HOPS; hop += 1) {
    const res = await browse(jar, url, next, options.ca);

    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.location;
      if (!location) throw new Error(`redirect ${res.status} from ${url.pathname} without Location`);
      const target = new URL(location, url);
      if (!isPlatformHop(target, start)) return target.href;
      url = target;
      next = { method: 'GET' };
      continue;
    }

    if (res.status === 200 && url.pathname.startsWith('/interaction/') && !submitted) {
      const { action, fields } = parseConsentForm(res.body, options.deny ? 'deny' : 'approve');
      url = new URL(action, url);
      next = { method: 'POST', body: fields.toString(), contentType: 'application/x-www-form-urlencoded' };
      submitted = true;
      continue;
    }

    const text = textOf(res.body).slice(0, 500);
    throw new Error(`consent flow stopped at ${url.pathname} with HTTP ${res.status}: ${text}`);
  }
  throw new Error(`consent flow did not reach the client's redirect_uri within ${MAX_HOPS} hops`);
}

/**
 * Requests the final callback address the way a browser landing there would.
 * @param {string} callbackUrl
 * @returns {Promise<RawResponse>}
 */
export function land(callbackUrl) {
  return send(new URL(callbackUrl), { headers: { accept: 'text/html' } });
}

/**
 * The device flow's browser side (RFC 8628 §3.3), as a user would do it: open the verification address (the
 * `verification_uri_complete`, or the plain one with `userCode` typed into its form), confirm the code, then
 * approve or deny on the consent page. Resolves with the last page's text ('Device signed in', or the error page).
 * @param {string} verificationUrl
 * @param {{ deny?: boolean, userCode?: string, ca?: string }} [options]
 * @returns {Promise<string>}
 */
export async function driveDeviceConsent(verificationUrl, options = {}) {
  const start = new URL(verificationUrl);
  const jar = new CookieJar();
  let url = start;
  /** @type {{ method: string, body?: string, contentType?: string }} */
  let next = { method: 'GET' };
  let typed = false;
  let confirmed = false;
  let consented = false;
  for (let hop = 0; hop < MAX_HOPS; hop += 1) {
    const res = await browse(jar, url, next, options.ca);
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.location;
      if (!location) throw new Error(`redirect ${res.status} from ${url.pathname} without Location`);
      url = new URL(location, url);
      if (url.origin !== start.origin) throw new Error(`the device flow left the platform for ${url.origin}`);
      next = { method: 'GET' };
      continue;
    }
    const form = (/** @type {string} */ id) => {
      const match = new RegExp(`<form\\b[^>]*\\bid="${id.replace('.', '\\.')}"[^>]*\\baction="([^"]+)"[^>]*>([\\s\\S]*?)</form>`, 'i').exec(res.body);
      if (!match) return undefined;
      const fields = new URLSearchParams();
      for (const m of (match[2] ?? '').matchAll(/<input\b[^>]*>/gi)) {
        const name = /\bname="([^"]*)"/.exec(m[0])?.[1];
        const value = /\bvalue="([^"]*)"/.exec(m[0])?.[1] ?? '';
        if (name) fields.append(decodeEntities(name), decodeEntities(value));
      }
      return { action: decodeEntities(match[1] ?? ''), fields };
    };
    const post = (/** @type {{ action: string, fields: URLSearchParams }} */ f) => {
      url = new URL(f.action, url);
      next = { method: 'POST', body: f.fields.toString(), contentType: 'application/x-www-form-urlencoded' };
    };
    if (res.status === 200 && !typed && !confirmed) {
      const input = form('op.deviceInputForm');
      if (input) {
        if (!options.userCode) throw new Error('the verification page asks for the user code, and none was given');
        input.fields.set('user_code', options.userCode);
        post(input);
        typed = true;
        continue;
      }
    }
    if (res.status === 200 && !confirmed) {
      const confirm = form('op.deviceConfirmForm');
      if (confirm) {
        post(confirm);
        confirmed = true;
        continue;
      }
    }
    if (res.status === 200 && url.pathname.startsWith('/interaction/') && !consented) {
      post(parseConsentForm(res.body, options.deny ? 'deny' : 'approve'));
      consented = true;
      continue;
    }
    if (consented) return textOf(res.body).slice(0, 500);
    throw new Error(`device flow stopped at ${url.pathname} with HTTP ${res.status}: ${textOf(res.body).slice(0, 500)}`);
  }
  throw new Error(`device flow did not finish within ${MAX_HOPS} hops`);
}
