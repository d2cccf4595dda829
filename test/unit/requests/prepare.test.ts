import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareRequest, type CallArgs } from '../../../src/requests/prepare.js';
import { ExitCode, UsageError } from '../../../src/errors.js';
import { tempDirs } from '../../helpers/tmp.js';

const BASE = 'https://api.example';
const dirs = tempDirs('plat-unit-call-');
afterAll(() => dirs.cleanup());

const noStdin = async (): Promise<string> => {
  throw new Error('stdin must not be read');
};
/** A request header, whether prepareRequest returns a Headers object or a plain lower-case record. */
function header(headers: unknown, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const record = headers as Record<string, string>;
  return Object.hasOwn(record, name.toLowerCase()) ? record[name.toLowerCase()] : undefined;
}
const args = (over: Partial<CallArgs>): CallArgs => ({ method: 'GET', target: '/api/courses', headers: [], fields: [], typedFields: [], ...over });

async function usageError(promise: Promise<unknown>): Promise<UsageError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a UsageError');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  expect((error as UsageError).exitCode).toBe(ExitCode.usage);
  return error as UsageError;
}

describe('prepareRequest', () => {
  it('resolves a path against the base URL (with or without a leading slash) and upper-cases the method', async () => {
    const r = await prepareRequest(args({ method: 'get', target: 'api/courses' }), `${BASE}/v1`, noStdin);
    expect(r.method).toBe('GET');
    expect(r.url.href).toBe(`${BASE}/v1/api/courses`);
    expect(r.sameOrigin).toBe(true);
    expect(r.jsonBody).toBeUndefined();
    expect(header(r.headers, 'accept')).toBe('application/json, */*;q=0.8');
  });

  it('keeps a protocol-relative-looking path on the base origin', async () => {
    const r = await prepareRequest(args({ target: '//evil.example/steal' }), BASE, noStdin);
    expect(r.url.host).toBe('api.example');
    expect(r.sameOrigin).toBe(true);
  });

  it('fields on GET, HEAD and DELETE become query parameters, typed values in JSON form', async () => {
    for (const method of ['GET', 'HEAD', 'DELETE']) {
      const r = await prepareRequest(args({ method, fields: ['q=algebra', 'empty='], typedFields: ['limit=5', 'open=true', 'none=null'] }), BASE, noStdin);
      expect(r.url.search).toBe('?q=algebra&empty=&limit=5&open=true&none=null');
      expect(r.jsonBody).toBeUndefined();
      expect(header(r.headers, 'content-type')).toBeUndefined();
    }
  });

  it('fields on POST become a JSON body with application/json', async () => {
    const r = await prepareRequest(args({ method: 'POST', fields: ['title=Algebra', 'seats=30'], typedFields: ['max=30', 'ratio=-1.5e2', 'public=false'] }), BASE, noStdin);
    expect(JSON.parse(r.jsonBody!)).toEqual({ title: 'Algebra', seats: '30', max: 30, ratio: -150, public: false });
    expect(header(r.headers, 'content-type')).toBe('application/json');
    expect(r.url.search).toBe('');
  });

  it('-F keeps values that are not JSON numbers as strings (leading zeros, signs, dots)', async () => {
    const r = await prepareRequest(
      args({ method: 'PUT', typedFields: ['zip=007', 'plus=+1', 'dot=.5', 'trail=1.', 'word=True', 'hex=0x10'] }),
      BASE,
      noStdin,
    );
    expect(JSON.parse(r.jsonBody!)).toEqual({ zip: '007', plus: '+1', dot: '.5', trail: '1.', word: 'True', hex: '0x10' });
  });

  it('splits a field at the first "=" only', async () => {
    const r = await prepareRequest(args({ fields: ['filter=a=b'] }), BASE, noStdin);
    expect(r.url.searchParams.get('filter')).toBe('a=b');
  });

  it('refuses fields without a key or "="', async () => {
    expect((await usageError(prepareRequest(args({ fields: ['novalue'] }), BASE, noStdin))).message).toMatch(/-f expects key=value/);
    expect((await usageError(prepareRequest(args({ typedFields: ['=5'] }), BASE, noStdin))).message).toMatch(/-F expects key=value/);
  });

  it('-F key=@file reads the file as a string; -f key=@file stays literal', async () => {
    const dir = await dirs.make();
    const file = path.join(dir, 'post.md');
    await writeFile(file, '# Title\n42\n');
    const r = await prepareRequest(args({ method: 'POST', typedFields: [`body=@${file}`], fields: [`raw=@${file}`] }), BASE, noStdin);
    expect(JSON.parse(r.jsonBody!)).toEqual({ raw: `@${file}`, body: '# Title\n42\n' });
  });

  it('-F key=@- reads stdin', async () => {
    const r = await prepareRequest(args({ method: 'POST', typedFields: ['body=@-'] }), BASE, async () => 'from stdin');
    expect(JSON.parse(r.jsonBody!)).toEqual({ body: 'from stdin' });
  });

  it('a missing @file is a usage error naming the path and the reason', async () => {
    const dir = await dirs.make();
    const missing = path.join(dir, 'nope.json');
    const error = await usageError(prepareRequest(args({ method: 'POST', typedFields: [`x=@${missing}`] }), BASE, noStdin));
    expect(error.message).toBe(`Cannot read ${missing} for -F: ENOENT.`);
  });

  it('parses -H into headers (first colon, trimmed); an explicit Content-Type wins over the JSON default', async () => {
    const r = await prepareRequest(args({ headers: ['Accept-Language:  de ', 'X-Time: 12:30:00', 'Accept: text/csv'] }), BASE, noStdin);
    expect(header(r.headers, 'accept-language')).toBe('de');
    expect(header(r.headers, 'x-time')).toBe('12:30:00');
    expect(header(r.headers, 'accept')).toBe('text/csv');
    const typed = await prepareRequest(args({ method: 'POST', headers: ['Content-Type: text/plain'], fields: ['a=b'] }), BASE, noStdin);
    expect(header(typed.headers, 'content-type')).toBe('text/plain');
  });

  it('refuses -H without a colon, with an empty name, or with a name that is not a token', async () => {
    for (const bad of ['NoColon', ': value', 'Bad Name: x', 'X-(): y']) {
      const error = await usageError(prepareRequest(args({ headers: [bad] }), BASE, noStdin));
      expect(error.message).toContain(`(got "${bad}")`);
    }
  });

  it('an absolute URL on another origin (or without a base URL) is not same-origin; on the base origin it is', async () => {
    const other = await prepareRequest(args({ target: 'https://elsewhere.example/x' }), BASE, noStdin);
    expect(other.url.href).toBe('https://elsewhere.example/x');
    expect(other.sameOrigin).toBe(false);
    const port = await prepareRequest(args({ target: 'https://api.example:8443/x' }), BASE, noStdin);
    expect(port.sameOrigin).toBe(false);
    const same = await prepareRequest(args({ target: 'HTTPS://API.EXAMPLE/x' }), BASE, noStdin);
    expect(same.sameOrigin).toBe(true);
    const noBase = await prepareRequest(args({ target: 'https://api.example/x' }), undefined, noStdin);
    expect(noBase.sameOrigin).toBe(false);
  });

  it('a relative target without a base URL is a usage error', async () => {
    expect((await usageError(prepareRequest(args({ target: '/api/courses' }), undefined, noStdin))).message).toMatch(/--base-url/);
  });

  it('refuses an invalid absolute URL and a method that is not a token', async () => {
    await usageError(prepareRequest(args({ target: 'https://' }), BASE, noStdin));
    expect((await usageError(prepareRequest(args({ method: 'GE T' }), BASE, noStdin))).message).toMatch(/not an HTTP method/);
  });

  it('--input: fields go to the query even on POST, and the content type defaults to JSON', async () => {
    const r = await prepareRequest(args({ method: 'POST', input: 'page.json', fields: ['draft=yes'], typedFields: ['rev=3'] }), BASE, noStdin);
    expect(r.inputFrom).toBe('page.json');
    expect(r.jsonBody).toBeUndefined();
    expect(r.url.search).toBe('?draft=yes&rev=3');
    expect(header(r.headers, 'content-type')).toBe('application/json');
  });

  it('--input keeps a content type given with -H', async () => {
    const r = await prepareRequest(args({ method: 'PUT', input: '-', headers: ['content-type: text/markdown'] }), BASE, noStdin);
    expect(r.inputFrom).toBe('-');
    expect(header(r.headers, 'content-type')).toBe('text/markdown');
  });
});

// Found by review (each failed before its fix).
const reviewBase = 'https://school.example';
const reviewCall = (extra: Partial<Parameters<typeof prepareRequest>[0]>) =>
  prepareRequest({ method: 'POST', target: '/api/x', headers: [], fields: [], typedFields: [], ...extra }, reviewBase, noStdin);

describe('-F keeps numbers that a double cannot hold exactly as strings', () => {
  it('sends 9007199254740993 and 1e400 unchanged', async () => {
    const r = await reviewCall({ typedFields: ['id=9007199254740993', 'x=1e400', 'n=42', 'f=1.5'] });
    expect(JSON.parse(r.jsonBody!)).toEqual({ id: '9007199254740993', x: '1e400', n: 42, f: 1.5 });
  });
});

describe('-H values', () => {
  it('refuses line breaks and characters outside Latin-1 as usage errors', async () => {
    await expect(reviewCall({ headers: ['X-A: b\r\nInjected: c'] })).rejects.toBeInstanceOf(UsageError);
    await expect(reviewCall({ headers: ['X-Note: €'] })).rejects.toThrow(/non-Latin-1/);
  });

  it('treats "constructor" and "__proto__" as ordinary header names', async () => {
    const r = await reviewCall({ headers: ['constructor: x', '__proto__: z'] });
    expect(r.headers.constructor).toBe('x');
    expect(Object.getOwnPropertyDescriptor(r.headers, '__proto__')?.value).toBe('z');
  });
});
