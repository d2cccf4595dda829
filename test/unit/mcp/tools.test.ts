/**
 * What plat mcp makes of the API description, on its own: schemas bounded and stripped to what an agent needs,
 * tool names MCP accepts, annotations from the method (MCP takes a missing destructiveHint as true).
 */
import { describe, expect, it } from 'vitest';
import { boundSchema, MAX_DEPTH, newBudget } from '../../../src/mcp/schema.js';
import { annotationsFor, lacking, toolName } from '../../../src/mcp/tools.js';
import type { Context } from '../../../src/context.js';

describe('boundSchema', () => {
  it('keeps the keywords an agent fills arguments with, and drops the rest', () => {
    const schema = {
      type: 'object',
      'x-internal': { secret: true },
      examples: [{ a: 1 }],
      $id: 'https://elsewhere.example/schema',
      required: ['title', 'nope'],
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200, description: 'the title\u001b[31m' },
        level: { type: 'string', enum: ['a', 'b'], default: 'a', nullable: true },
        'bad name!': { type: 'string' },
      },
      additionalProperties: false,
    };
    expect(boundSchema(schema)).toEqual({
      type: 'object',
      required: ['title'],
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200, description: 'the title [31m' },
        level: { type: ['string', 'null'], enum: ['a', 'b'], default: 'a' },
      },
      additionalProperties: false,
    });
  });

  it(`stops at depth ${MAX_DEPTH} and at the node budget: below, anything is accepted`, () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 50; i++) deep = { type: 'array', items: deep };
    let depth = 0;
    let node = boundSchema(deep) as Record<string, unknown>;
    for (; node.items; node = node.items as Record<string, unknown>) depth++;
    expect(depth).toBe(MAX_DEPTH);
    expect(node).toEqual({});

    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    const bounded = boundSchema(wide, newBudget(10)) as { properties: Record<string, unknown> };
    expect(Object.values(bounded.properties).filter((p) => JSON.stringify(p) !== '{}')).toHaveLength(9);
  });
});

describe('toolName', () => {
  it('is the operationId when MCP allows it, else a name made of its letters and digits, or of method and path', () => {
    expect(toolName({ operationId: 'listCourses', method: 'GET', path: '/api/courses' })).toBe('listCourses');
    expect(toolName({ operationId: 'list courses\u001b[2J', method: 'GET', path: '/api/courses' })).toBe('list_courses_2J');
    expect(toolName({ operationId: null, method: 'GET', path: '/api/courses/{id}' })).toBe('get_api_courses_id');
    expect(toolName({ operationId: 'x'.repeat(100), method: 'GET', path: '/' })).toBe('x'.repeat(64));
  });
});

describe('annotationsFor', () => {
  it('says read-only for GET/HEAD, non-destructive for POST (explicitly), idempotent for PUT and DELETE', () => {
    expect(annotationsFor('GET')).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(annotationsFor('HEAD')).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(annotationsFor('POST')).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(annotationsFor('PUT')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(annotationsFor('DELETE')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(annotationsFor('PATCH')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
  });
});

describe('lacking', () => {
  // The sentence reads only the profile the invocation uses (suggest.ts): a context with just that is enough here.
  const ctx = { env: {}, globals: { profile: 'default' } } as unknown as Context;

  it('names the login that adds the scope, by device when the session was made by device', () => {
    expect(lacking(ctx, 'listStudents', ['students:read'], false)).toContain(': plat login --add-scope students:read (plat mcp');
    expect(lacking(ctx, 'listStudents', ['students:read'], true)).toContain(': plat login --device --add-scope students:read (plat mcp');
  });
});
