/**
 * The one rule for header names from input (http/header-rule.ts), held for each name of each class it refuses and
 * in every spelling a client may send (the rule is about a class: one credential header, one case, one stray
 * space). The tests of the ways in (-H, batch lines, the library, plat mcp, plat proxy) each try a few names; this
 * holds every one, so a name dropped from a set (Cookie2 from the credentials) fails here.
 */
import { describe, expect, it } from 'vitest';
import { headerKey, refusedHeader } from '../../../src/http/header-rule.js';

const spellings = (name: string) => [name, name.toLowerCase(), name.toUpperCase(), ` ${name}`, `${name} `, `\t${name}`];

describe('refusedHeader: the header names plat never takes from input', () => {
  it.each(['Authorization', 'Cookie', 'Cookie2'])('%s, in any spelling, is refused toward the platform and allowed elsewhere', (name) => {
    for (const spelling of spellings(name)) {
      expect(refusedHeader(spelling, true), JSON.stringify(spelling)).toMatch(/never taken from input there/);
      expect(refusedHeader(spelling, false), JSON.stringify(spelling)).toBeUndefined();
    }
  });

  it.each(['Host', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer', 'Transfer-Encoding', 'Content-Length', 'Expect', 'Set-Cookie'])(
    '%s, in any spelling, is refused wherever the request goes',
    (name) => {
      for (const spelling of spellings(name)) {
        expect(refusedHeader(spelling, true), JSON.stringify(spelling)).toBeDefined();
        expect(refusedHeader(spelling, false), JSON.stringify(spelling)).toBeDefined();
      }
    },
  );

  it.each(['Proxy-Authorization', 'Proxy-Connection', 'Sec-Fetch-Site', 'Sec-WebSocket-Key'])('%s (a refused prefix), in any spelling, is refused', (name) => {
    for (const spelling of spellings(name)) expect(refusedHeader(spelling, false), JSON.stringify(spelling)).toBeDefined();
  });

  it('takes the names that change nothing about where a request goes or whose it is', () => {
    for (const name of ['Accept', 'Content-Type', 'X-Request-Id', 'Origin', 'Referer', 'If-None-Match', 'Authorization-Extra', 'Cookies', 'Hostname']) {
      expect(refusedHeader(name, true), name).toBeUndefined();
    }
  });

  it('reads a name trimmed and case-folded', () => {
    expect(headerKey('  Cookie2\t')).toBe('cookie2');
  });
});
