/** The one reading of headers from input (src/requests/headers.ts), shared by -H, batch lines, the library and MCP. */
import { describe, expect, it } from 'vitest';
import { headerRecord, type HeaderProblem } from '../../../src/requests/headers.js';

const say = (problem: HeaderProblem) => new Error(JSON.stringify(problem));
const read = (pairs: Array<[string, unknown]>, sameOrigin = true) => headerRecord(pairs, sameOrigin, say);

describe('headerRecord', () => {
  it('compares names as the sender does (trimmed, lower-case) and joins a name given twice', () => {
    expect({ ...read([['X-Tag', ' a '], ['x-tag ', 'b']]) }).toEqual({ 'x-tag': 'a, b' });
  });

  it('refuses what the header rule never takes from input, whatever the spelling', () => {
    expect(() => read([['Authorization ', 'Bearer x']])).toThrow(/"kind":"header-refused","name":"authorization"/);
    expect(() => read([['HOST', 'elsewhere']])).toThrow(/"kind":"header-refused","name":"host"/);
    // Toward another origin a credential is the person's own.
    expect({ ...read([['Authorization', 'Bearer x']], false) }).toEqual({ authorization: 'Bearer x' });
  });

  it('refuses a name that is no HTTP token, a value that is not text, and a value with a line break', () => {
    expect(() => read([['bad name', 'x']])).toThrow(/"kind":"header-name"/);
    expect(() => read([['x-n', 1]])).toThrow(/"kind":"header-value"/);
    expect(() => read([['x-n', 'a\r\nHost: b']])).toThrow(/"kind":"header-text"/);
  });

  it('keeps a header named like an object member as a header', () => {
    expect(read([['constructor', 'x']]).constructor).toBe('x');
  });
});
