/**
 * Headers from input, taken once by one rule for every way in (`-H`, a batch line's or the library's `headers`, an
 * MCP tool's arguments): each name compared as the sender compares it (http/header-rule.ts headerKey), a name the
 * rule never takes from input refused, each value one line of Latin-1 text, and a name given twice joined as HTTP
 * joins it. What is wrong is a HeaderProblem; each caller says it in its own words.
 */
import { headerKey, refusedHeader } from '../http/header-rule.js';

export type HeaderProblem =
  | { kind: 'header-value'; name: string }
  | { kind: 'header-name'; name: string }
  | { kind: 'header-refused'; name: string; reason: string }
  | { kind: 'header-text'; name: string };

/** An HTTP token (RFC 9110 §5.6.2): what a method or a header name may be. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function headerRecord(pairs: Iterable<readonly [string, unknown]>, sameOrigin: boolean, say: (problem: HeaderProblem) => Error): Record<string, string> {
  // No prototype: a header named "constructor" or "__proto__" is just a header.
  const sent: Record<string, string> = Object.create(null);
  for (const [name, value] of pairs) {
    if (typeof value !== 'string') throw say({ kind: 'header-value', name });
    const key = headerKey(name);
    if (!TOKEN.test(key)) throw say({ kind: 'header-name', name });
    const refused = refusedHeader(key, sameOrigin);
    if (refused) throw say({ kind: 'header-refused', name: key, reason: refused });
    const text = value.trim();
    // HTTP field values are Latin-1 text without line breaks: anything else would split or corrupt the request.
    if (/[^\t\x20-\x7e\x80-\xff]/.test(text)) throw say({ kind: 'header-text', name: key });
    sent[key] = Object.hasOwn(sent, key) ? `${sent[key]}, ${text}` : text;
  }
  return sent;
}
