/**
 * Approves consent on any server's own HTML pages over plain HTTP, as a person's browser would: a cookie jar,
 * redirects followed by hand, and each page's form submitted with its hidden fields plus the values the test
 * supplies (user name, password, the Approve button). Stops at the first redirect that leaves the server's origin —
 * plat's loopback callback — and returns that URL without requesting it.
 */
import { request } from 'undici';

interface Form {
  action: string;
  fields: URLSearchParams;
}

const attr = (tag: string, name: string) => new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i').exec(tag)?.slice(2).find((v) => v !== undefined);

function decode(text: string): string {
  return text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

/** The page's first POST form, with what a browser would send: named inputs (checked boxes only) and the values given. */
function parseForm(html: string, pageUrl: URL, given: Record<string, string>): Form | undefined {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const fields = new URLSearchParams();
  for (const [tag] of form[2]!.matchAll(/<(input|button)\b[^>]*>/gi)) {
    const name = attr(tag, 'name');
    if (!name) continue;
    const type = (attr(tag, 'type') ?? 'text').toLowerCase();
    const value = decode(attr(tag, 'value') ?? '');
    if (type === 'submit' || tag.toLowerCase().startsWith('<button')) {
      if (name in given) fields.set(name, given[name]!);
      continue;
    }
    if (type === 'checkbox' && !/\bchecked\b/i.test(tag) && !(name in given)) continue;
    fields.set(name, name in given ? given[name]! : value);
  }
  for (const [name, value] of Object.entries(given)) if (!fields.has(name) && new RegExp(`name=["']${name}["']`).test(form[2]!)) fields.set(name, value);
  return { action: new URL(decode(attr(form[1]!, 'action') ?? ''), pageUrl).href, fields };
}

export async function approveOnForms(authorizeUrl: string, given: Record<string, string>): Promise<string> {
  const origin = new URL(authorizeUrl).origin;
  const cookies = new Map<string, string>();
  let url = new URL(authorizeUrl);
  let init: { method: string; body?: string; referer?: string } = { method: 'GET' };
  for (let hop = 0; hop < 20; hop++) {
    // undici's request, not fetch: fetch always says sec-fetch-mode "cors", and some servers (Better Auth) answer
    // such a request as a script's call, with JSON naming the next page instead of redirecting a browser to it.
    const response = await request(url, {
      method: init.method as 'GET' | 'POST',
      body: init.body,
      headers: {
        accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
        'sec-fetch-mode': 'navigate',
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(init.referer ? { referer: init.referer, origin } : {}),
      },
    });
    const setCookie = response.headers['set-cookie'] ?? [];
    for (const line of Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const text = await response.body.text();
    const status = response.statusCode;
    const location = typeof response.headers.location === 'string' ? response.headers.location : undefined;
    if (status >= 300 && status < 400 && location) {
      const next = new URL(location, url);
      if (next.origin !== origin) return next.href;
      url = next;
      init = { method: 'GET' };
      continue;
    }
    const form = status === 200 ? parseForm(text, url, given) : undefined;
    if (!form) throw new Error(`consent: HTTP ${status} at ${url.pathname} without a form to submit: ${text.slice(0, 300)}`);
    init = { method: 'POST', body: form.fields.toString(), referer: url.href };
    url = new URL(form.action);
  }
  throw new Error('consent: too many steps');
}
