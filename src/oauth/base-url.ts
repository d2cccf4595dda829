/** What plat accepts of an address it will talk to: https, or plain http on loopback only. */
/** 127.0.0.0/8, localhost and [::1]: the only hosts plat talks to over plain http. */
export function isLoopbackHost(hostname: string): boolean {
  // Character by character, not with regular expressions: this runs for every endpoint a command checks, and V8
  // compiles a regular expression to machine code the second time it runs (~0.1 ms each, twice per whoami).
  let host = hostname.toLowerCase();
  if (host.startsWith('[')) host = host.slice(1);
  if (host.endsWith(']')) host = host.slice(0, -1);
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  const parts = host.split('.');
  return parts.length === 4 && parts[0] === '127' && parts.every(isOneToThreeDigits);
}

function isOneToThreeDigits(part: string): boolean {
  if (part.length < 1 || part.length > 3) return false;
  for (let i = 0; i < part.length; i++) {
    const code = part.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/** An http: URL is acceptable only on loopback; used for the base URL and for every endpoint from metadata. */
export function isSecureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}
