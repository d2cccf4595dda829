/** Reading an OpenAPI document into the operations plat lists, checks calls against, and completes. */
import { describe, expect, it } from 'vitest';
import { buildIndex, missingScopes, operationsFor, pathBelow } from '../../../src/catalogue/openapi.js';
import { table } from '../../../src/commands/shared/table.js';

const base = 'https://school.example.com';
const doc = {
  openapi: '3.1.0',
  info: { title: 'School\u0007 API', version: '2' },
  servers: [{ url: 'https://school.example.com/v1' }],
  security: [{ oauth2: ['school:read'] }],
  paths: {
    '/courses': { get: { summary: 'List courses', security: [{ oauth2: ['courses:read'] }, {}] }, post: { security: [{ oauth2: ['courses:write', 'bad scope"'] }] } },
    '/courses/{id}': { summary: 'One course', get: {}, delete: { security: [] } },
    '/courses/mine': { get: { operationId: 'mine', security: [{ apiKey: [] }] } },
    '/public': { get: { security: [{}] } },
  },
  components: { securitySchemes: { oauth2: { type: 'oauth2', flows: {} }, apiKey: { type: 'apiKey', in: 'header', name: 'x-key' } } },
};

describe('buildIndex', () => {
  const index = buildIndex(doc, base, `${base}/openapi.json`, 0);

  it('reads method, path below the base URL, summary, id, and the scopes a token needs', () => {
    expect(index).toMatchObject({ title: 'School API', version: '2' });
    const listed = index.operations.map(({ method, path, summary, operationId, scopes, anonymous }) => ({ method, path, summary, operationId, scopes, anonymous }));
    expect(listed).toEqual([
      { method: 'GET', path: '/v1/courses', summary: 'List courses', operationId: null, scopes: ['courses:read'], anonymous: true },
      { method: 'POST', path: '/v1/courses', summary: null, operationId: null, scopes: ['courses:write'], anonymous: false },
      { method: 'GET', path: '/v1/courses/{id}', summary: 'One course', operationId: null, scopes: ['school:read'], anonymous: false },
      { method: 'DELETE', path: '/v1/courses/{id}', summary: 'One course', operationId: null, scopes: [], anonymous: true },
      { method: 'GET', path: '/v1/courses/mine', summary: null, operationId: 'mine', scopes: [], anonymous: false },
      { method: 'GET', path: '/v1/public', summary: null, operationId: null, scopes: [], anonymous: true },
    ]);
  });

  it('matches request paths to templates, a literal path before a templated one', () => {
    expect(operationsFor(index, '/v1/courses/42').map((o) => o.method)).toEqual(['GET', 'DELETE']);
    expect(operationsFor(index, '/v1/courses/mine').map((o) => o.operationId)).toEqual(['mine']);
    expect(operationsFor(index, '/v1/courses/').map((o) => o.path)).toEqual(['/v1/courses', '/v1/courses']);
    expect(operationsFor(index, '/v1/courses/42/x')).toEqual([]);
  });

  it('matches a parameter inside a segment, and one that spans none or two segments not at all', () => {
    const files = buildIndex({ openapi: '3.1.0', info: { title: 'f', version: '1' }, paths: { '/files/{name}.json': { get: {} }, '/v{version}/x': { get: {} } } }, base, `${base}/openapi.json`, 0);
    expect(operationsFor(files, '/files/report.json').map((o) => o.path)).toEqual(['/files/{name}.json']);
    expect(operationsFor(files, '/v2/x').map((o) => o.path)).toEqual(['/v{version}/x']);
    for (const path of ['/files/report.txt', '/files/.json', '/files/a/b.json', '/v/x', '/files']) expect(operationsFor(files, path), path).toEqual([]);
  });

  it('names what a session lacks', () => {
    const [list] = operationsFor(index, '/v1/courses');
    expect(missingScopes(list!, ['openid'])).toEqual(['courses:read']);
    expect(missingScopes(list!, ['courses:read'])).toEqual([]);
  });

  it('refuses what is not an API description', () => {
    expect(() => buildIndex({ openapi: '3.1.0' }, base, base, 0)).toThrow('it has no "paths"');
    expect(() => buildIndex([], base, base, 0)).toThrow();
  });
});

describe('table', () => {
  it('pads on the plain text, styles after, and leaves no trailing blanks', () => {
    const star = (s: string) => `*${s}*`;
    expect(table([['a', 'bb', ''], ['ccc', 'd', 'e']], [star])).toBe('*a  *  bb\n*ccc*  d   e\n');
  });
});

describe('pathBelow: what a path adds below the base URL, whole segments only', () => {
  it('takes the part below the base, and the base itself as empty', () => {
    expect(pathBelow('/school', '/school/v1')).toBe('/v1');
    expect(pathBelow('/school/', '/school/v1')).toBe('/v1');
    expect(pathBelow('/school', '/school')).toBe('');
    expect(pathBelow('', '/v1')).toBe('/v1');
    expect(pathBelow('/', '/v1')).toBe('/v1');
  });

  it('refuses a path that only shares a prefix of characters with the base', () => {
    expect(pathBelow('/school', '/school2/v1')).toBeUndefined();
    expect(pathBelow('/school', '/schoolv1')).toBeUndefined();
    expect(pathBelow('/school', '/other')).toBeUndefined();
  });

  it('gives a server URL beside the base path (not below it) no prefix', () => {
    const beside = buildIndex({ ...doc, servers: [{ url: 'https://school.example.com/school2/v1' }] }, 'https://school.example.com/school', 'x', 0);
    expect(beside.operations.map((o) => o.path)).toContain('/courses');
    const below = buildIndex({ ...doc, servers: [{ url: 'https://school.example.com/school/v1' }] }, 'https://school.example.com/school', 'x', 0);
    expect(below.operations.map((o) => o.path)).toContain('/v1/courses');
  });
});
