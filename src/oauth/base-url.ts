import { UsageError } from '../errors.js';

/** 127.0.0.0/8, localhost and [::1]: the only hosts plat talks to over plain http. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** An http: URL is acceptable only on loopback; used for the base URL and for every endpoint from metadata. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/**
 * Validates and normalises --base-url / PLAT_BASE_URL: an absolute http(s) URL, https unless loopback, no
 * credentials, query or fragment; the trailing slash removed so it compares equal however it was typed.
 */
export function parseBaseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new UsageError(`"${input}" is not a URL. Pass the platform's origin, e.g. --base-url https://school.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`The base URL must start with https:// (got ${url.protocol}//).`);
  }
  if (!isSecureOrLoopback(url)) {
    throw new UsageError(
      `The base URL must use https:// (http:// is accepted only for 127.0.0.1, localhost and [::1]): ${url.origin}`,
    );
  }
  if (url.username || url.password) throw new UsageError('The base URL must not contain a user name or password.');
  if (url.search || url.hash) throw new UsageError('The base URL must not contain a query or fragment.');
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path}`;
}
