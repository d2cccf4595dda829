import { describe, expect, it } from 'vitest';
import type { ParamSpec } from '../../../src/catalogue/operation-shape.js';
import { LineError, prepareLine } from '../../../src/requests/batch-line.js';
import { buildRawRequest, buildRequest, problemPhrase, type Operation, type RequestProblem } from '../../../src/requests/request-object.js';

const BASE = 'https://api.example';

class Said extends Error {
  constructor(readonly problem: RequestProblem) {
    super(problemPhrase(problem));
  }
}
const say = (problem: RequestProblem): Error => new Said(problem);
const raw = (object: Record<string, unknown>) => buildRawRequest(object, { baseUrl: BASE, noBaseUrl: 'log in', say });

function problemOf(run: () => unknown): RequestProblem {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(Said);
    return (error as Said).problem;
  }
  throw new Error('expected a problem');
}

const param = (name: string, where: ParamSpec['in'], required = false, schema: Record<string, unknown> = { type: 'string' }): ParamSpec => ({ name, in: where, required, description: null, schema });
const getCourse: Operation = {
  method: 'GET',
  path: '/api/courses/{courseId}',
  summary: null,
  operationId: 'getCourse',
  scopes: [],
  anonymous: false,
  security: null,
  description: null,
  parameters: [param('courseId', 'path', true), param('include', 'query', false, { type: 'array', items: { type: 'string' } }), param('limit', 'query', false, { type: 'integer' })],
  refusedHeaders: [{ name: 'Host', reason: 'Host chooses which site on the server gets the request' }],
  body: null,
};
const createNote: Operation = {
  ...getCourse,
  method: 'POST',
  path: '/api/notes',
  operationId: 'createNote',
  parameters: [],
  refusedHeaders: [],
  body: { required: true, contentType: 'text/plain', schema: null },
};
const operations = new Map([getCourse, createNote].map((op) => [op.operationId, op]));
const withOps = { baseUrl: BASE, noBaseUrl: 'log in', say, operation: async (id: string) => operations.get(id) };

describe('buildRawRequest', () => {
  it('resolves the path, upper-cases the method and asks for JSON', () => {
    const r = raw({ method: 'get', path: '/api/courses' });
    expect(r).toMatchObject({ method: 'GET', sameOrigin: true, jsonBody: undefined });
    expect(r.url.href).toBe(`${BASE}/api/courses`);
    expect({ ...r.headers }).toEqual({ accept: 'application/json, */*;q=0.8' });
  });

  it('the query rule: a list repeats its name, an object is name[member], added to the query the path has as written', () => {
    const r = raw({ method: 'GET', path: '/api/echo?x=a%20b', query: { ids: [1, 2], filter: { year: 2 }, none: null } });
    expect(r.url.search).toBe('?x=a%20b&ids=1&ids=2&filter%5Byear%5D=2&none=null');
    expect(problemOf(() => raw({ method: 'GET', path: '/p', query: { f: [{ a: 1 }] } }))).toEqual({ kind: 'rule', message: 'query "f": an object inside a list has no query form.' });
    expect(problemOf(() => raw({ method: 'GET', path: '/p', query: { d: new Date(0) } })).kind).toBe('rule');
    expect(problemOf(() => raw({ method: 'GET', path: '/p', query: [1] }))).toEqual({ kind: 'query' });
    expect(raw({ method: 'GET', path: '/p', query: null }).url.search).toBe('');
  });

  it('the header rule: names compared trimmed and lower-case, credentials toward the platform and framing refused', () => {
    expect(problemOf(() => raw({ method: 'GET', path: '/p', headers: { 'Authorization ': 'Bearer x' } }))).toMatchObject({ kind: 'header-refused', name: 'authorization' });
    expect(problemOf(() => raw({ method: 'GET', path: '/p', headers: { Host: 'other' } }))).toMatchObject({ kind: 'header-refused', name: 'host' });
    expect(problemOf(() => raw({ method: 'GET', path: '/p', headers: { 'X-A': 'one\r\nX-B: two' } })).kind).toBe('rule');
    expect(problemOf(() => raw({ method: 'GET', path: '/p', headers: { 'x-n': 1 } }))).toEqual({ kind: 'header-value', name: 'x-n' });
    expect(problemOf(() => raw({ method: 'GET', path: '/p', headers: { 'a b': 'v' } })).kind).toBe('rule');
    // Another origin's credentials are the person's own.
    const other = raw({ method: 'GET', path: 'https://elsewhere.example/x', headers: { Authorization: 'Basic eA==' } });
    expect(other.sameOrigin).toBe(false);
    expect(other.headers.authorization).toBe('Basic eA==');
    expect({ ...raw({ method: 'GET', path: '/p', headers: { 'X-Tag': 'a', 'x-tag ': 'b' } }).headers }).toMatchObject({ 'x-tag': 'a, b' });
  });

  it('the body rule: JSON, but for a string with a non-JSON content type of its own, sent as its text', () => {
    expect(raw({ method: 'POST', path: '/p', body: { a: 1 } })).toMatchObject({ jsonBody: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect(raw({ method: 'POST', path: '/p', body: 'hi' }).jsonBody).toBe('"hi"');
    expect(raw({ method: 'POST', path: '/p', body: null }).jsonBody).toBe('null');
    expect(raw({ method: 'POST', path: '/p', headers: { 'Content-Type': 'text/csv' }, body: 'a,b' })).toMatchObject({ jsonBody: 'a,b', headers: { 'content-type': 'text/csv' } });
  });

  it('method and path: strings, the method an HTTP token; no platform to resolve against is said as the caller says it', () => {
    expect(problemOf(() => raw({ path: '/p' }))).toEqual({ kind: 'method' });
    expect(problemOf(() => raw({ method: 'GET', path: 7 }))).toEqual({ kind: 'path' });
    expect(problemOf(() => raw({ method: 'G T', path: '/p' }))).toEqual({ kind: 'rule', message: '"G T" is not an HTTP method.' });
    const problem = problemOf(() => buildRawRequest({ method: 'GET', path: '/p' }, { baseUrl: undefined, noBaseUrl: 'pass baseUrl to createClient', say }));
    expect(problem.kind).toBe('url');
    expect((problem as { message: string }).message).toContain('pass baseUrl to createClient');
  });
});

describe('buildRequest', () => {
  it('an op object: parameters into the path and query, checked against their schemas', async () => {
    const r = await buildRequest({ op: 'getCourse', params: { courseId: 'c 1', include: ['a', 'b'], limit: 3 } }, withOps);
    expect(r.url.href).toBe(`${BASE}/api/courses/c%201?include=a&include=b&limit=3`);
    await expect(buildRequest({ op: 'getCourse', params: { courseId: 'c', limit: 'many' } }, withOps)).rejects.toMatchObject({ problem: { kind: 'rule' } });
    await expect(buildRequest({ op: 'getCourse', params: { courseId: 'c', bogus: 1 } }, withOps)).rejects.toMatchObject({ problem: { kind: 'param-unknown', name: 'bogus', known: ['courseId', 'include', 'limit'] } });
    await expect(buildRequest({ op: 'getCourse', params: { courseId: 'c', host: 'x' } }, withOps)).rejects.toMatchObject({ problem: { kind: 'param-refused', name: 'Host' } });
    await expect(buildRequest({ op: 'nope' }, withOps)).rejects.toMatchObject({ problem: { kind: 'no-operation', op: 'nope' } });
    await expect(buildRequest({ op: 'getCourse', params: [] }, withOps)).rejects.toMatchObject({ problem: { kind: 'params' } });
  });

  it("an op body of a non-JSON content type is sent as the text given, and nothing reads stdin", async () => {
    const r = await buildRequest({ op: 'createNote', body: 'a note' }, withOps);
    expect(r).toMatchObject({ method: 'POST', jsonBody: 'a note', inputFrom: undefined, headers: { 'content-type': 'text/plain' } });
  });

  it('members: each kind takes its own and no others; without an operation lookup, "op" is a member too many', async () => {
    await expect(buildRequest({ method: 'GET', path: '/p', qeury: {} }, withOps)).rejects.toMatchObject({ problem: { kind: 'members', extra: ['qeury'], op: false } });
    await expect(buildRequest({ op: 'getCourse', path: '/p' }, withOps)).rejects.toMatchObject({ problem: { kind: 'members', extra: ['path'], op: true } });
    const { operation: _, ...library } = withOps;
    await expect(buildRequest({ op: 'getCourse' }, library)).rejects.toMatchObject({ problem: { kind: 'members', extra: ['op'] } });
    await expect(buildRequest([1], library)).rejects.toMatchObject({ problem: { kind: 'not-object' } });
  });
});

describe('plat batch lines and client.batch() take the same shapes', () => {
  // client.batch() builds with no operation lookup (library/batch.ts); a batch line with one. For raw requests the
  // two must agree on every shape: what one refuses, the other refuses.
  const shapes: Array<[string, Record<string, unknown>, boolean]> = [
    ['a plain GET', { method: 'GET', path: '/api/courses' }, true],
    ['a query with a list and an object', { method: 'GET', path: '/p', query: { ids: [1, 2], f: { y: 2 } } }, true],
    ['a null query', { method: 'GET', path: '/p', query: null }, true],
    ['a JSON body', { id: 'x', method: 'POST', path: '/p', body: { a: [1] } }, true],
    ['a list of objects in the query', { method: 'GET', path: '/p', query: { f: [{ y: 2 }] } }, false],
    ['a header that is a number', { method: 'GET', path: '/p', headers: { 'x-n': 1 } }, false],
    ['Authorization toward the platform', { method: 'GET', path: '/p', headers: { authorization: 'Bearer x' } }, false],
    ['a member neither takes', { method: 'GET', path: '/p', qeury: { a: 1 } }, false],
    ['no method', { path: '/p' }, false],
    ['a method that is no HTTP token', { method: 'GE T', path: '/p' }, false],
  ];
  const line = { baseUrl: BASE, index: () => Promise.reject(new Error('no op line here')) };
  it.each(shapes)('%s', async (_, shape, accepted) => {
    const asLine = await prepareLine(JSON.stringify(shape), line).then(() => true, (error: unknown) => {
      expect(error).toBeInstanceOf(LineError);
      return false;
    });
    const { operation: _op, ...library } = withOps;
    const asLibrary = await buildRequest(shape, library).then(() => true, (error: unknown) => {
      expect(error).toBeInstanceOf(Said);
      return false;
    });
    expect([asLine, asLibrary]).toEqual([accepted, accepted]);
  });
});
