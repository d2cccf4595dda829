/**
 * src/proxy/headers.ts: which headers cross the proxy. Each rule is about a class of header names, and HTTP names
 * are case-insensitive: a rule that holds for the lower-case spelling only would pass `Set-Cookie` as a platform
 * writes it. Every spelling is tried.
 */
import { describe, expect, it } from 'vitest';
import { downstreamHeaders, upstreamHeaders, type Dropped } from '../../../src/proxy/headers.js';

const spellings = (name: string) => [name.toLowerCase(), name.toUpperCase(), name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())];
const names = (flat: readonly string[]) => flat.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());

describe('downstreamHeaders', () => {
  it('drops Set-Cookie, Set-Cookie2 and every Access-Control-* in any spelling, and keeps the rest', () => {
    const raw: string[] = [];
    for (const name of ['set-cookie', 'set-cookie2', 'access-control-allow-origin', 'access-control-expose-headers']) {
      for (const spelled of spellings(name)) raw.push(spelled, 'x=1');
    }
    raw.push('X-Kept', 'yes');
    const dropped: Dropped = {};
    const out = downstreamHeaders(raw, dropped, () => false);
    expect(out).toEqual(['X-Kept', 'yes']);
    expect(dropped).toMatchObject({ cookies: true, cors: true });
  });

  it('drops the hop-by-hop headers, and those Connection names, in any spelling', () => {
    const dropped: Dropped = {};
    const out = downstreamHeaders(['CONNECTION', 'X-HOP, Other-Hop', 'x-hop', '1', 'OTHER-HOP', '2', 'Transfer-Encoding', 'chunked', 'KEEP-ALIVE', 'timeout=5', 'Proxy-Authenticate', 'Basic', 'X-Kept', 'yes'], dropped, () => false);
    expect(names(out)).toEqual(['x-kept']);
  });
});

describe('upstreamHeaders', () => {
  it("drops the client's Authorization, Cookie, Origin and the hop-by-hop headers in any spelling", () => {
    const raw: string[] = [];
    for (const name of ['authorization', 'cookie', 'origin', 'proxy-authorization', 'keep-alive', 'te', 'host']) {
      for (const spelled of spellings(name)) raw.push(spelled, 'v');
    }
    raw.push('Connection', 'X-Hop', 'X-HOP', '1', 'X-Kept', 'yes');
    const dropped: Dropped = {};
    // A client that names no coding is asked identity for (the proxy scans what it passes on: proxy/encoding.ts).
    expect(upstreamHeaders(raw, dropped)).toEqual({ 'x-kept': 'yes', 'accept-encoding': 'identity' });
    expect(dropped.authorization).toBe(true);
  });
});
