/**
 * The pure parts of plat op and plat scopes plan: what the index keeps of an operation (parameters, body, security
 * alternatives, local $refs resolved), parameter checks, plat op's words as its commands parse them, the body
 * check (ajv), the help text, and the least set of scopes.
 */
import { describe, expect, it } from 'vitest';
import { bodyProblems } from '../../../../src/catalogue/body-check.js';
import { buildIndex } from '../../../../src/catalogue/openapi.js';
import { checkParam } from '../../../../src/catalogue/param-check.js';
import { planScopes } from '../../../../src/catalogue/scope-plan.js';
import { Command, CommanderError } from 'commander';
import { parseFilter, parseLeading, parseOperation } from '../../../../src/commands/op/command.js';
import { renderOpHelp } from '../../../../src/commands/op/help.js';
import { prepareOpRequest } from '../../../../src/requests/operation.js';
import { scaled } from '../../../helpers/time.js';

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

describe("plat op's words, parsed by the commands op-command.ts makes", () => {
  /** plat op's command as cli.ts hands it on: errors thrown (main.ts maps them), commander's text captured. */
  const opCommand = () => {
    const written = { out: '', err: '' };
    const command = new Command('op')
      .exitOverride()
      .configureOutput({ writeOut: (s) => void (written.out += s), writeErr: (s) => void (written.err += s) })
      .helpOption(false);
    return { command, written };
  };
  const param = (name: string, type: string, where: 'query' | 'header' | 'path' = 'query') => ({ name, in: where, required: false, description: null, schema: { type } });
  const operation = (...parameters: ReturnType<typeof param>[]) => ({ ...getCourse, operationId: 'op', parameters });
  const values = (given: Array<{ param: { name: string }; flag: string; values: string[] }>) => given.map((g) => [g.param.name, g.flag, g.values]);

  it('a long name the operation has is its parameter; the short form reaches plat; -p reaches any parameter', () => {
    const { given, flags } = parseOperation(
      opCommand().command,
      operation(param('include', 'string'), param('limit', 'integer'), param('json', 'boolean')),
      ['--include', 'lessons', '-iH', 'a: b', '-fa=b', '--limit=5', '-p', 'json=true', '--field', 'c=d'],
      {},
    );
    expect(values(given)).toEqual([
      ['include', '--include', ['lessons']],
      ['limit', '--limit', ['5']],
      ['json', '-p json', ['true']],
    ]);
    expect(flags).toEqual({ include: true, header: ['a: b'], field: ['a=b', 'c=d'], param: ['json=true'] });
  });

  it('a boolean parameter may stand alone; a header parameter answers to its name in lower case too', () => {
    const op = operation(param('open', 'boolean'), param('Accept-Language', 'string', 'header'));
    expect(values(parseOperation(opCommand().command, op, ['--open', '--accept-language', 'de'], {}).given)).toEqual([
      ['open', '--open', ['true']],
      ['Accept-Language', '--accept-language', ['de']],
    ]);
    expect(values(parseOperation(opCommand().command, op, ['--open', 'false', '--open=true'], {}).given)).toEqual([['open', '--open', ['false', 'true']]]);
  });

  it('a name no option can spell, or one that would share a plat option\'s key, is given with -p', () => {
    const op = operation(param('bad name', 'string'), param('typedField', 'string'), param('$filter', 'string'));
    expect(values(parseOperation(opCommand().command, op, ['-p', 'bad name=x', '-p', 'typedField=y', '--$filter', 'z', '-F', 'n=1'], {}).given)).toEqual([
      ['$filter', '--$filter', ['z']],
      ['bad name', '-p bad name', ['x']],
      ['typedField', '-p typedField', ['y']],
    ]);
    expect(() => parseOperation(opCommand().command, op, ['--typedField', 'y'], {})).toThrow(
      "--typedField is not an option plat op can take for op's parameter typedField: give it as -p 'typedField=<value>'.",
    );
    const header = operation(param('Accept-Language', 'string', 'header'));
    expect(() => parseOperation(opCommand().command, header, ['--ACCEPT-LANGUAGE', 'de'], {})).toThrow("give it as -p 'Accept-Language=<value>'");
    expect(values(parseOperation(opCommand().command, header, ['-p', 'ACCEPT-language=de'], {}).given)).toEqual([['Accept-Language', '-p ACCEPT-language', ['de']]]);
  });

  it('refuses stray words and unknown options in its own sentences (with the closest parameter)', () => {
    const op = operation(param('limit', 'integer'));
    expect(() => parseOperation(opCommand().command, op, ['lessons'], {})).toThrow('"lessons" is not a parameter');
    expect(() => parseOperation(opCommand().command, op, ['--limt', '3'], {})).toThrow('op has no parameter --limt. Did you mean --limit?');
    expect(() => parseOperation(opCommand().command, op, ['--limt=3'], {})).toThrow('op has no parameter --limt. Did you mean --limit?');
    expect(() => parseOperation(opCommand().command, op, ['-iZ'], {})).toThrow('Unknown option -Z.');
  });

  it("leaves a value missing and --help to commander: its error, the operation's own help", () => {
    const op = operation(param('limit', 'integer'));
    const missing = opCommand();
    expect(() => parseOperation(missing.command, op, ['--limit'], {})).toThrow(CommanderError);
    expect(missing.written.err).toBe("error: option '--limit <integer>' argument missing\n");
    const help = opCommand();
    expect(() => parseOperation(help.command, op, ['--limit', '3', '--help'], {})).toThrow(expect.objectContaining({ code: 'commander.helpDisplayed' }));
    expect(help.written.out).toMatch(/^Usage: plat op op \[parameters\]\n/);
  });

  it('options before the operationId are plat op\'s own and carry over; a listing\'s words all filter', () => {
    const leading = parseLeading(opCommand().command, ['--refresh', '-H', 'a: 1', 'getCourse', '--id', '1']);
    expect(leading).toEqual({ flags: { refresh: true, header: ['a: 1'] }, help: false, first: 'getCourse', rest: ['--id', '1'] });
    expect(parseOperation(opCommand().command, operation(param('id', 'string')), leading.rest.concat('-H', 'b: 2'), leading.flags).flags).toEqual({ refresh: true, header: ['a: 1', 'b: 2'] });
    const unknown = opCommand();
    expect(() => parseLeading(unknown.command, ['--refersh'])).toThrow(expect.objectContaining({ code: 'commander.unknownOption' }));
    expect(unknown.written.err).toBe("error: unknown option '--refersh'\n(Did you mean --refresh?)\nName the operation first: plat op <operationId> --<parameter> value.\n");
    const missingValue = opCommand();
    expect(() => parseLeading(missingValue.command, ['--timeout'])).toThrow(expect.objectContaining({ code: 'commander.optionMissingArgument' }));
    expect(missingValue.written.err).toBe("error: option '--timeout <seconds>' argument missing\n"); // no hint to name the operation first
    expect(parseFilter(opCommand().command, ['post', '--refresh', 'courses'], {})).toEqual({ filter: 'post courses', flags: { refresh: true }, help: false });
    expect(parseFilter(opCommand().command, ['getCorse', '--courseId', 'x'], {})).toBeUndefined();
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
    expect(Date.now() - started).toBeLessThan(scaled(1_000));
    expect(plan.scopes).toHaveLength(160);
    for (const op of plan.operations) expect(op.satisfiedBy.every((s) => plan.scopes.includes(s))).toBe(true);
  });
});
