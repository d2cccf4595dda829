/** Regression tests for input-handling bugs found by review: each failed before its fix. */
import { describe, expect, it } from 'vitest';
import { splitCommand } from '../../src/browser.js';
import { prepareRequest } from '../../src/commands/call-request.js';
import { UsageError } from '../../src/errors.js';
import { redactUrl } from '../../src/redact.js';

const base = 'https://school.example';
const noStdin = async () => '';
const call = (extra: Partial<Parameters<typeof prepareRequest>[0]>) =>
  prepareRequest({ method: 'POST', target: '/api/x', headers: [], fields: [], typedFields: [], ...extra }, base, noStdin);

describe('-F keeps numbers that a double cannot hold exactly as strings', () => {
  it('sends 9007199254740993 and 1e400 unchanged', async () => {
    const r = await call({ typedFields: ['id=9007199254740993', 'x=1e400', 'n=42', 'f=1.5'] });
    expect(JSON.parse(r.jsonBody!)).toEqual({ id: '9007199254740993', x: '1e400', n: 42, f: 1.5 });
  });
});

describe('-H values', () => {
  it('refuses line breaks and characters outside Latin-1 as usage errors', async () => {
    await expect(call({ headers: ['X-A: b\r\nInjected: c'] })).rejects.toBeInstanceOf(UsageError);
    await expect(call({ headers: ['X-Note: €'] })).rejects.toThrow(/non-Latin-1/);
  });

  it('treats "constructor" and "__proto__" as ordinary header names', async () => {
    const r = await call({ headers: ['constructor: x', '__proto__: z'] });
    expect(r.headers.constructor).toBe('x');
    expect(Object.getOwnPropertyDescriptor(r.headers, '__proto__')?.value).toBe('z');
  });
});

describe('splitCommand', () => {
  it('groups quotes inside a word the way a shell does', () => {
    expect(splitCommand('chromium --user-data-dir="/tmp/my profile" --x')).toEqual(['chromium', '--user-data-dir=/tmp/my profile', '--x']);
    expect(splitCommand(`'a'b "c d"e f\\ g`)).toEqual(['ab', 'c de', 'f g']);
    expect(splitCommand('open ""')).toEqual(['open', '']);
  });
});

describe('redactUrl', () => {
  it('redacts secrets in the fragment', () => {
    const out = redactUrl('https://x.example/cb#access_token=SECRET&state=1');
    expect(out).not.toContain('SECRET');
    expect(out).toContain('state=1');
  });
});
