/**
 * The platform's address as the user gives it (--base-url, PLAT_BASE_URL, a login's question): checked once here,
 * for the CLI and the library alike.
 */
import { UsageError } from '../../errors.js';
import { isSecureOrLoopback } from '../../oauth/base-url.js';

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
