/**
 * The hostile-description corpus: API descriptions a server can serve at /openapi.json to hang plat (patterns that
 * backtrack, templates that do), to make it eat memory (references that multiply) or to drive the terminal (escape
 * sequences and bidirectional controls in identifiers, types, enums and patterns). Each is a plain OpenAPI 3.1
 * document; the reference platform serves any of them (`serveDescription`).
 */
import type { Platform } from '../platform/index.mjs';

type Json = Record<string, unknown>;

const document = (paths: Json, components: Json = {}): Json => ({ openapi: '3.1.0', info: { title: 'Hostile', version: '1' }, paths, components });

/** `^(a+)+$` backtracks exponentially on "aaaa…!" in V8's engine. */
export const CATASTROPHIC_PATTERN = '^(a+)+$';
/** 40 a's then a character that fails the match: minutes to days for a backtracking engine. */
export const BACKTRACKING_VALUE = `${'a'.repeat(40)}!`;

/** A query parameter and a body field, both with a catastrophic pattern. */
export function backtrackingPatterns(): Json {
  return document({
    '/api/courses': {
      get: {
        operationId: 'findCourses',
        parameters: [{ name: 'code', in: 'query', schema: { type: 'string', pattern: CATASTROPHIC_PATTERN } }],
      },
      post: {
        operationId: 'createCourse',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: { code: { type: 'string', pattern: CATASTROPHIC_PATTERN } } } } },
        },
      },
    },
  });
}

/** Sixteen parameters in one segment, then a literal: `[^/]+` sixteen times backtracks on a path without it. */
export function manyParametersInOneSegment(): Json {
  const template = Array.from({ length: 16 }, (_, i) => `{p${i}}`).join('');
  return document({ [`/api/t/${template}x`]: { get: { operationId: 'crowded', parameters: [] } } });
}
export const CROWDED_PATH = `/api/t/${'a'.repeat(60)}`;

/**
 * Schemas that each name the next one twice, thirty deep (2^30 nodes if expanded), used as the body of `operations`
 * operations: about 1.4 MB of document with 10,000.
 */
export function multiplyingReferences(operations: number): Json {
  const schemas: Json = {};
  for (let i = 0; i < 30; i++) {
    const next = { $ref: `#/components/schemas/S${i + 1}` };
    schemas[`S${i}`] = { type: 'object', properties: { a: next, b: next } };
  }
  const paths: Json = {};
  for (let i = 0; i < operations; i++) {
    paths[`/api/m${i}`] = { post: { operationId: `m${i}`, requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } } } } };
  }
  return document(paths, { schemas });
}

/** `count` operations, each as small as a description allows: a listing longer than a function's arguments. */
export function manyOperations(count: number): Json {
  const paths: Json = {};
  for (let i = 0; i < count; i++) paths[`/a${i}`] = { get: { operationId: `o${i}` } };
  return document(paths);
}

/** A body of `count` string properties, each with a pattern and an enum: ajv's compile time grows faster than it. */
export function wideBody(count: number): Json {
  const properties: Json = {};
  for (let i = 0; i < count; i++) properties[`p${i}`] = { type: 'string', pattern: `^a${i}$`, enum: ['x', 'y'] };
  return document({ '/api/courses': { post: { operationId: 'createWide', requestBody: { content: { 'application/json': { schema: { type: 'object', properties } } } } } } });
}

/**
 * Four operations, each with 200 alternative security requirements of 40 scopes of their own: the exact least
 * cover has 200^4 branches, and nothing prunes them.
 */
export function scopeMaze(): Json {
  const paths: Json = {};
  for (let op = 0; op < 4; op++) {
    const security = Array.from({ length: 200 }, (_, a) => ({ oauth: Array.from({ length: 40 }, (_, i) => `s${op}.${a}.${i}`) }));
    paths[`/api/maze${op}`] = { get: { operationId: `maze${op}`, security } };
  }
  return document(paths, { securitySchemes: { oauth: { type: 'oauth2', flows: {} } } });
}

/** Everything a terminal would act on: CSI, OSC (a window title), BEL, the one-byte CSI, and bidirectional controls. */
export const TERMINAL_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Escape sequences and right-to-left overrides wherever a description's text is printed. */
export function terminalControls(): Json {
  return document({
    '/api/courses': {
      get: {
        operationId: 'list\u202eSTEAL\u202c',
        summary: 'Lists \u001b[2J\u001b[Hcourses',
        parameters: [
          { name: 'state', in: 'query', schema: { type: '\u001b[31mstring', enum: ['\u001b]0;pwned\u0007', 'active\u200f'] } },
          { name: 'code', in: 'query', schema: { type: 'string', pattern: '^[a-z]+\u009b31m\u2066$' } },
        ],
      },
      post: {
        operationId: 'createCourse',
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['state'],
                properties: {
                  'ti\u001b[8mtle': { type: 'string', pattern: '\u001b[41m.*' },
                  state: { type: 'string', enum: ['\u001b[5mblink', 'ok\u061c'] },
                },
              },
            },
          },
        },
      },
    },
  });
}

/** The platform serves `doc` as its /openapi.json until the next reset. */
export function serveDescription(platform: Platform, doc: Json): void {
  const text = JSON.stringify(doc);
  platform.override('/openapi.json', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    return true;
  });
}
