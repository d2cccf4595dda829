/** What plat accepts of an address it will talk to: https, or plain http on loopback only. */
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
