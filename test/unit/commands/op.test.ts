/**
 * The pure parts of plat op and plat scopes plan: what the index keeps of an operation (parameters, body, security
 * alternatives, local $refs resolved), parameter checks, the split of plat op's words, the body check (ajv), the
 * help text, and the least set of scopes.
 */
import { describe, expect, it } from 'vitest';
import { bodyProblems } from '../../../src/catalogue/body-check.js';
import { buildIndex } from '../../../src/catalogue/openapi.js';
import { checkParam } from '../../../src/catalogue/param-check.js';
import { planScopes } from '../../../src/catalogue/scope-plan.js';
import { listingArgs, parseOpArgs, splitLeading, type OwnOption } from '../../../src/commands/op-args.js';
import { renderOpHelp } from '../../../src/commands/op-help.js';
import { prepareOpRequest } from '../../../src/commands/op-request.js';

const base = 'https://school.example.com';
const doc = {
  openapi: '3.1.0',
  info: { title: 'School', version: '1' },
  paths: {
    '/courses/{id}': {
      parameters: [{ $ref: '#/components/parameters/Id' }],
      get: {
        operationId: 'getCourse',
        summary: 'One course',
        description: 'Line one\nline two\u001b[31m',
        parameters: [
          { name: 'level', in: 'query', schema: { type: 'string', enum: ['beginner', 'advanced'] } },
          { name: 'X-Trace', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'session', in: 'cookie', schema: { type: 'string' } },
          { name: 'bad name;rm', in: 'query', schema: { type: 'string' } },
        ],
        security: [{ oauth2: ['courses:read'] }, { apiKey: [] }, {}],
      },
      put: {
        operationId: 'putCourse',
        requestBody: { required: true, content: { 'text/plain': {}, 'application/json': { schema: { $ref: '#/components/schemas/Course' } } } },
        security: [{ oauth2: ['courses:write'] }],
      },
    },
  },
  components: {
    parameters: { Id: { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } } },
    schemas: {
      Course: {
        type: 'object',
        required: ['title'],
        properties: { title: { type: 'string' }, seats: { type: 'integer' }, parent: { $ref: '#/components/schemas/Course' } },
        additionalProperties: false,
      },
    },
    securitySchemes: { oauth2: { type: 'oauth2', flows: {} }, apiKey: { type: 'apiKey', in: 'header', name: 'k' } },
  },
};
const index = buildIndex(doc, base, `${base}/openapi.json`, 0);
const getCourse = index.operations.find((o) => o.operationId === 'getCourse')!;
const putCourse = index.operations.find((o) => o.operationId === 'putCourse')!;

describe('the index keeps what plat op needs', () => {
  it('parameters of the path item and the operation, $refs resolved, cookies and unusable names left out', () => {
    expect(getCourse.parameters.map((p) => `${p.in}:${p.name}:${p.required}`)).toEqual(['path:id:true', 'query:level:false', 'header:X-Trace:true']);
    expect(getCourse.parameters[0]!.schema).toEqual({ type: 'integer', minimum: 1 });
    expect(getCourse.description).toBe('Line one\nline two [31m');
  });

  it('security as alternatives, leaving out those plat cannot meet (an API key)', () => {
    expect(getCourse.security).toEqual([['courses:read'], []]);
  });

  it('the JSON body schema, a recursive $ref cut off instead of followed forever', () => {
    expect(putCourse.body).toMatchObject({ required: true, contentType: 'application/json' });
    const schema = putCourse.body!.schema as { properties: { title: unknown; parent: unknown } };
    expect(schema.properties.title).toEqual({ type: 'string' });
    expect(schema.properties.parent).toEqual({});
  });
});

describe('buildIndex refuses what is not an OpenAPI 2.0 or 3.x document', () => {
  it.each([
    [{ paths: {} }, 'it names no OpenAPI version'],
    [{ openapi: '4.0.0', paths: {} }, 'it is OpenAPI 4.0.0, which plat does not read'],
    [{ swagger: '1.2', paths: {} }, 'it is OpenAPI 1.2'],
    [{ openapi: '3.0.3' }, 'it has no "paths"'],
  ])('%j', (document, message) => {
    expect(() => buildIndex(document, base, base, 0)).toThrow(message);
  });
});

describe('checkParam', () => {
  const [id, level] = getCourse.parameters;
  it('accepts what the schema allows and says what it expects otherwise', () => {
    expect(checkParam(id!, ['42'], '--id')).toEqual(['42']);
    expect(() => checkParam(id!, ['0'], '--id')).toThrow('--id expects an integer of at least 1 (got "0").');
    expect(() => checkParam(id!, ['4.5'], '--id')).toThrow('--id expects an integer of at least 1 (got "4.5").');
    expect(() => checkParam(id!, ['1', '2'], '--id')).toThrow('--id takes one value (given 2 times).');
    expect(() => checkParam(level!, ['expert'], '--level')).toThrow('--level expects one of: beginner, advanced (got "expert").');
    const flag = { name: 'open', in: 'query' as const, required: false, description: null, schema: { type: 'boolean' } };
    expect(() => checkParam(flag, ['yes'], '--open')).toThrow('--open expects true or false (got "yes").');
    const list = { name: 'tag', in: 'query' as const, required: false, description: null, schema: { type: 'array', items: { type: 'integer' } } };
    expect(checkParam(list, ['1', '2'], '--tag')).toEqual(['1', '2']);
    expect(() => checkParam(list, ['1', 'x'], '--tag')).toThrow('--tag expects an integer (got "x").');
  });
});

describe("plat op's words", () => {
  const options: OwnOption[] = [
    { long: '--include', short: '-i', key: 'include', takesValue: false, negate: false },
    { long: '--field', short: '-f', key: 'field', takesValue: true, negate: false, parse: (v, prev) => [...((prev as string[]) ?? []), v] },
    { long: '--param', short: '-p', key: 'param', takesValue: true, negate: false, parse: (v, prev) => [...((prev as string[]) ?? []), v] },
    { long: '--refresh', key: 'refresh', takesValue: false, negate: false },
  ];
  const params = [
    { name: 'include', in: 'query' as const, required: false, description: null, schema: { type: 'string' } },
    { name: 'limit', in: 'query' as const, required: false, description: null, schema: { type: 'integer' } },
    { name: 'json', in: 'query' as const, required: false, description: null, schema: { type: 'boolean' } },
  ];

  it('a long name the operation has is its parameter; the short form reaches plat; -p reaches any parameter', () => {
    const { given, flags } = parseOpArgs('op', params, ['--include', 'lessons', '-i', '-fa=b', '--limit=5', '-p', 'json=true', '--field', 'c=d'], options);
    expect(given.map((g) => [g.param.name, g.flag, g.values])).toEqual([
      ['include', '--include', ['lessons']],
      ['limit', '--limit', ['5']],
      ['json', '-p json', ['true']],
    ]);
    expect(flags).toMatchObject({ include: true, field: ['a=b', 'c=d'] });
  });

  it('refuses stray words, unknown parameters (with the closest), and a value missing', () => {
    expect(() => parseOpArgs('op', params, ['lessons'], options)).toThrow('"lessons" is not a parameter');
    expect(() => parseOpArgs('op', params, ['--limt', '3'], options)).toThrow('op has no parameter --limt. Did you mean --limit?');
    expect(() => parseOpArgs('op', params, ['--limit'], options)).toThrow('--limit needs a value.');
    expect(() => parseOpArgs('op', params, ['-x'], options)).toThrow('Unknown option -x.');
    expect(parseOpArgs('op', params, ['--json'], options).given[0]!.values).toEqual(['true']);
  });

  it('options before the operationId, and a listing where every word filters', () => {
    expect(splitLeading(['--refresh', 'getCourse', '--id', '1'], options)).toMatchObject({ first: 'getCourse', rest: ['--id', '1'], flags: { refresh: true } });
    expect(() => splitLeading(['--refersh'], options)).toThrow("unknown option '--refersh'\n(Did you mean --refresh?)");
    expect(listingArgs(['post', '--refresh', 'courses'], options)).toMatchObject({ filter: 'post courses', flags: { refresh: true } });
  });
});

describe('prepareOpRequest', () => {
  const named = { ...getCourse, operationId: 'getCourse', parameters: [{ name: 'id', in: 'path' as const, required: true, description: null, schema: { type: 'string' } }] };
  const noStdin = () => Promise.reject(new Error('no stdin'));
  const given = (value: string) => [{ param: named.parameters[0]!, flag: '--id', values: [value] }];

  it('fills the path template, encoding the value', async () => {
    const request = await prepareOpRequest(named, given('a b/c'), { headers: [], fields: [], typedFields: [] }, base, noStdin);
    expect(request.url.href).toBe(`${base}/courses/a%20b%2Fc`);
  });

  it('refuses a dot segment, which would climb to another path', async () => {
    await expect(prepareOpRequest(named, given('..'), { headers: [], fields: [], typedFields: [] }, base, noStdin)).rejects.toThrow(
      '--id cannot be "..": it would change the path rather than fill it.',
    );
  });

  it('refuses "." too: /courses/. is the list, another operation', async () => {
    await expect(prepareOpRequest(named, given('.'), { headers: [], fields: [], typedFields: [] }, base, noStdin)).rejects.toThrow(
      '--id cannot be ".": it would change the path rather than fill it.',
    );
    // Only whole dot segments move the path; dots inside a value fill it like any other character.
    for (const value of ['...', '.x', 'x.']) {
      const request = await prepareOpRequest(named, given(value), { headers: [], fields: [], typedFields: [] }, base, noStdin);
      expect(request.url.href).toBe(`${base}/courses/${value}`);
    }
  });
});

describe('bodyProblems (ajv)', () => {
  it('names each field that is wrong, missing or unknown', async () => {
    const schema = putCourse.body!.schema!;
    expect(await bodyProblems(schema, { title: 'Algebra', seats: 30 })).toEqual([]);
    expect(await bodyProblems(schema, { seats: 'thirty', colour: 'red' })).toEqual([
      'the field title is required (-f title=…)',
      'there is no field colour',
      'seats: must be integer',
    ]);
    expect(await bodyProblems({ type: 'object', properties: { level: { enum: ['a', 'b'] } } }, { level: 'c' })).toEqual(['level: must be one of: a, b']);
    expect(await bodyProblems({ type: 'string', nullable: true }, null)).toEqual([]);
  });
});

describe('renderOpHelp', () => {
  it('describes the operation from the document, sanitized, with an example that passes the checks', () => {
    const help = renderOpHelp(getCourse as typeof getCourse & { operationId: string });
    expect(help).toContain('GET /courses/{id} — One course');
    expect(help).not.toContain('\u001b');
    expect(help).toMatch(/--level <beginner\|advanced> +query$/m);
    expect(help).toMatch(/--X-Trace <string> +header, required/);
    expect(help).toContain('Scopes: courses:read (also callable without a token, as anonymous).');
    expect(help).toContain("$ plat op getCourse --id 1 --X-Trace '<X-Trace>'");
    expect(renderOpHelp(putCourse as typeof putCourse & { operationId: string })).toContain("$ plat op putCourse --id 1 -f 'title=<title>'");
  });
});

describe('planScopes: the least set of scopes', () => {
  it('picks one alternative per operation so that the union is smallest', () => {
    const plan = planScopes([
      { id: 'enrolments', security: [['students:read', 'courses:read'], ['members:read'], []] },
      { id: 'report', security: [['analytics:read'], ['school:read']] },
      { id: 'course', security: [['courses:read'], []] },
    ]);
    // members:read alone would need courses:read beside it for "course": 3 either way, but {students:read,
    // courses:read} + analytics:read is also 3 — the tie goes to names, deterministically.
    expect(plan.scopes).toHaveLength(3);
    expect(plan.operations.map((o) => o.id)).toEqual(['enrolments', 'report', 'course']);
  });

  it('finds the true minimum where picking the cheapest alternative one at a time does not', () => {
    // Greedy per operation takes {a} for x and {b} for y, then needs {c} for z: 3. Taking {c} for all three: 1.
    const plan = planScopes([
      { id: 'x', security: [['a'], ['c']] },
      { id: 'y', security: [['b'], ['c']] },
      { id: 'z', security: [['c']] },
    ]);
    expect(plan.scopes).toEqual(['c']);
  });

  it('prefers scopes the session already holds when sizes tie, and says what it cannot plan', () => {
    expect(planScopes([{ id: 'r', security: [['analytics:read'], ['school:read']] }], ['school:read']).scopes).toEqual(['school:read']);
    expect(planScopes([{ id: 'r', security: [['analytics:read'], ['school:read']] }]).scopes).toEqual(['analytics:read']);
    const plan = planScopes([
      { id: 'open', security: [[]] },
      { id: 'silent', security: null },
      { id: 'key', security: [] },
    ]);
    expect(plan).toMatchObject({ scopes: [], unstated: ['silent'], unsatisfiable: ['key'], operations: [{ id: 'open', satisfiedBy: [] }] });
  });
});

describe('planScopes on a hostile description', () => {
  it('hundreds of alternatives of many scopes each: an answer within a second, covering every operation', () => {
    // Every alternative its own 40 scopes: no pruning helps, and the exact search has 200^4 branches.
    const alternatives = (op: number) => Array.from({ length: 200 }, (_, a) => Array.from({ length: 40 }, (_, s) => `s${op}.${a}.${s}`));
    const inputs = [0, 1, 2, 3].map((op) => ({ id: `op${op}`, security: alternatives(op) }));
    const started = Date.now();
    const plan = planScopes(inputs);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(plan.scopes).toHaveLength(160);
    for (const op of plan.operations) expect(op.satisfiedBy.every((s) => plan.scopes.includes(s))).toBe(true);
  });
});
