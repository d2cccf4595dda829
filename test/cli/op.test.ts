/**
 * plat op, plat scopes plan and plat login --for, run as the built CLI against the reference platform:
 * - every validation error exits 2, names the parameter and what it expects, and sends nothing to the operation;
 * - a checked call then behaves exactly as plat call (stdout, stderr, exit code), token and step-up hint included;
 * - the OpenAPI cache: an hour's reuse, If-None-Match revalidation, and a bad document never replacing a good copy;
 * - the least set of scopes, and --for asking for exactly that set (read from the server's record of the request).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome({ PLAT_BASE_URL: undefined });

const op = (...args: string[]) => home.run(['op', '--base-url', platform.baseUrl, ...args]);
/** How many requests reached the API outside /openapi.json. */
const apiRequests = () => platform.stats.events.filter((e) => e.path.startsWith('/api/') && !e.path.startsWith('/api/oauth/')).length;

async function login(...args: string[]) {
  const result = await home.login(platform, args);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/** The scopes of the server's most recent authorization request, sorted. */
function lastRequestedScopes(): string[] {
  const last = platform.authorizations.at(-1);
  expect(last).toBeDefined();
  return last!.scope.split(' ').sort();
}

describe('plat op <operationId>: checked before anything is sent (exit 2)', () => {
  it.each([
    ['a missing required parameter', ['getCourse'], /getCourse needs --courseId \(a string matching \^course-\[0-9a-z\]\+\$\)/],
    ['an integer that is not one', ['listEnrolments', '--courseId', 'course-101', '--limit', 'ten'], /--limit expects an integer from 1 to 100 \(got "ten"\)/],
    ['an integer out of bounds', ['listEnrolments', '--courseId', 'course-101', '--limit', '500'], /--limit expects an integer from 1 to 100 \(got "500"\)/],
    ['a value outside the enum', ['getCourse', '--courseId', 'course-101', '--include', 'everything'], /--include expects one of: lessons, lecturers \(got "everything"\)/],
    ['a header outside its enum', ['getCourse', '--courseId', 'course-101', '--Accept-Language', 'xx'], /--Accept-Language expects one of: en, de, fr \(got "xx"\)/],
    ['a path parameter that breaks its pattern', ['getCourse', '--courseId', '../students'], /--courseId expects a string matching/],
    ['an unknown parameter, with the closest', ['getCourse', '--course', 'course-101'], /getCourse has no parameter --course\. Did you mean --courseId\?/],
    // commander's sentence, as plat call gives it for --timeout without its value
    ['a parameter without its value', ['getSchoolReport', '--year'], /option '--year <integer>' argument missing/],
    ['a body field of the wrong type', ['updateCourse', '--courseId', 'course-101', '-f', 'seats=many'], /does not match what updateCourse takes: seats: must be integer/],
    ['a body field outside its enum', ['updateCourse', '--courseId', 'course-101', '-f', 'level=expert'], /level: must be one of: beginner, intermediate, advanced/],
    ['a body field the schema does not allow', ['updateCourse', '--courseId', 'course-101', '-f', 'colour=red'], /there is no field colour/],
    ['a required body field missing', ['createCourse', '-F', 'seats=3'], /the field title is required \(-f title=…\)/],
    ['no body where one is required', ['createCourse'], /createCourse needs a request body: give its fields with -f\/-F, or the whole body with --input <file>/],
    ['a body for an operation that takes none', ['listCourses', '-f', 'q=x'], /listCourses takes no request body/],
    ['an operation the document does not have', ['getCorse', '--courseId', 'course-101'], /The platform's API has no operation "getCorse"\. Did you mean getCourse\?/],
  ])('%s', async (_name, args, message) => {
    const result = await op(...args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expectCleanError(result);
    expect(apiRequests()).toBe(0);
  });

  it('an --input file that is not JSON, or does not match the schema', async () => {
    const file = path.join(home.dir, 'course.json');
    await writeFile(file, 'title: Algebra\n');
    let result = await op('createCourse', '--input', file);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/The request body for createCourse is not JSON/);
    await writeFile(file, JSON.stringify({ seats: 0 }));
    result = await op('createCourse', '--input', file);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the field title is required.*seats: must be >= 1/);
    result = await home.run(['op', '--base-url', platform.baseUrl, 'createCourse', '--input', '-'], { stdin: '{"seats": "x"}' });
    expect(result.code).toBe(2);
    expect(apiRequests()).toBe(0);
  });
});

describe('plat op <operationId>: then exactly plat call', () => {
  it('builds path, query and header from the parameters and prints what plat call prints', async () => {
    const viaOp = await op('getCourse', '--courseId', 'course-101', '--include', 'lessons', '--Accept-Language', 'de', '-i');
    const viaCall = await home.run(['call', '--base-url', platform.baseUrl, 'GET', '/api/courses/course-101?include=lessons', '-H', 'Accept-Language: de', '-i']);
    expect(viaOp.code, viaOp.stderr).toBe(0);
    const withoutDate = (s: string) => s.replace(/^date: .*$/m, '');
    expect(withoutDate(viaOp.stdout)).toBe(withoutDate(viaCall.stdout));
    expect(viaOp.stderr).toBe(viaCall.stderr);
    expect(JSON.parse(viaOp.stdout.slice(viaOp.stdout.indexOf('\n\n') + 2))).toMatchObject({ course: { id: 'course-101', lessons: [] }, language: 'de' });
  });

  it('sends the checked body as JSON, with the token, and exits as plat call does on 403 (exit 5, the step-up command)', async () => {
    await login('--scope', 'courses:read');
    const denied = await op('updateCourse', '--courseId', 'course-101', '-F', 'seats=40', '-f', 'level=advanced');
    const deniedByCall = await home.run(['call', '--base-url', platform.baseUrl, 'PATCH', '/api/courses/course-101', '-F', 'seats=40', '-f', 'level=advanced']);
    expect(denied.code).toBe(5);
    expect(denied.stderr).toBe(deniedByCall.stderr);
    expect(denied.stdout).toBe(deniedByCall.stdout);

    await login('--add-scope', 'courses:write');
    const result = await op('updateCourse', '--courseId', 'course-101', '-F', 'seats=40', '-f', 'level=advanced');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ course: expect.objectContaining({ id: 'course-101', seats: 40, level: 'advanced' }) });
  });

  it('--paginate and --jq as plat call has them: the same output for the same request', async () => {
    const viaOp = await op('listCoursesLinkHeader', '--per_page', '5', '--total', '12', '--paginate', '--jq', '[.[].id]');
    const viaCall = await home.run(['call', '--base-url', platform.baseUrl, 'GET', '/api/lists/link?per_page=5&total=12', '--paginate', '--jq', '[.[].id]']);
    expect(viaOp.code, viaOp.stderr).toBe(0);
    expect(viaOp.stdout).toBe(viaCall.stdout);
    expect(JSON.parse(viaOp.stdout)).toHaveLength(12);
    const title = await op('getCourse', '--courseId', 'course-101', '--jq', '.course.title');
    const titleByCall = await home.run(['call', '--base-url', platform.baseUrl, 'GET', '/api/courses/course-101', '--jq', '.course.title']);
    expect(title.stdout).toMatch(/Notes on the Analytical Engine/);
    expect(title.stdout).toBe(titleByCall.stdout);
    const bad = await op('getCourse', '--courseId', 'course-101', '--jq', '.course.title |||');
    expect(bad.code).toBe(2);
  });

  it("parses its words as plat call does (commander): combined short flags, --name=value, options before the operationId", async () => {
    const withoutDate = (s: string) => s.replace(/^date: .*$/m, '');
    const same = async (opArgs: string[], callArgs: string[]) => {
      const [viaOp, viaCall] = [await op(...opArgs), await home.run(['call', '--base-url', platform.baseUrl, ...callArgs])];
      expect(viaOp.code, viaOp.stderr).toBe(0);
      expect(viaCall.code, viaCall.stderr).toBe(0);
      expect(withoutDate(viaOp.stdout)).toBe(withoutDate(viaCall.stdout));
      expect(viaOp.stderr).toBe(viaCall.stderr);
      return viaOp.stdout;
    };
    // The words issue 28 found refused ("Unknown option"), with -i and -H in one word.
    await same(['getCourse', '-iH', 'a: b', '--courseId', 'course-101'], ['GET', '/api/courses/course-101', '-iH', 'a: b']);
    // The echo operation answers with the headers it received: the header reached the server. (It is public, so
    // plat op sends it without a token: plat call does with --anonymous.)
    const echoed = await same(['echo', '-iH', 'X-Probe: yes'], ['GET', '/api/echo', '--anonymous', '-iH', 'X-Probe: yes']);
    expect(echoed).toMatch(/^HTTP\/1\.1 200 OK\n/);
    expect(JSON.parse(echoed.slice(echoed.indexOf('\n\n') + 2)).headers).toMatchObject({ 'x-probe': 'yes' });
    // --name=value for parameters and plat's options alike; a header parameter by its name in lower case.
    await same(
      ['getCourse', '--courseId=course-101', '--include=lessons', '--accept-language', 'de', '--jq=.course.lessons'],
      ['GET', '/api/courses/course-101?include=lessons', '-H', 'Accept-Language: de', '--jq=.course.lessons'],
    );
    // A repeatable option before the operationId and after it adds up, as it does anywhere on plat call's line.
    const both = await same(['-H', 'X-A: 1', 'echo', '-H', 'X-B: 2'], ['GET', '/api/echo', '--anonymous', '-H', 'X-A: 1', '-H', 'X-B: 2']);
    expect(JSON.parse(both).headers).toMatchObject({ 'x-a': '1', 'x-b': '2' });
  });

  it('an option neither the operation nor plat has is a usage error (exit 2) before anything is sent, as in plat call', async () => {
    for (const [opArgs, message] of [
      [['getCourse', '--courseId', 'course-101', '-Z'], /Unknown option -Z\. plat op getCourse --help lists/],
      [['getCourse', '--courseId', 'course-101', '-iZ'], /Unknown option -Z\./],
      [['getCourse', '--courseId=course-101', '--bogus=1'], /getCourse has no parameter --bogus\. Its parameters: --courseId, --include, --Accept-Language\./],
      [['getCourse', '--courseId', 'course-101', '--', 'extra'], /"extra" is not a parameter/],
      // kubectl's -o json points to --json here too, as for every other command (test/ui/help.test.ts)
      [['getCourse', '--courseId', 'course-101', '-o', 'json'], /Unknown option -o\. For machine-readable output, plat takes --json/],
      [['getCourse', '--courseId', 'course-101', '--output', 'json'], /getCourse has no parameter --output\. For machine-readable output, plat takes --json/],
    ] as const) {
      const result = await op(...opArgs);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expectCleanError(result);
    }
    const byCall = await home.run(['call', '--base-url', platform.baseUrl, 'GET', '/api/courses/course-101', '-iZ']);
    expect([byCall.code, byCall.stdout]).toEqual([2, '']);
    expect(apiRequests()).toBe(0);
  });

  it('an operation whose parameter shares a name with a plat option: the parameter wins, the short form reaches plat', async () => {
    const result = await op('echo', '-i');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HTTP\/1\.1 200 OK/);
    const included = await op('getCourse', '--courseId', 'course-102', '--include', 'lecturers');
    expect(JSON.parse(included.stdout).course.lecturers).toEqual([]);
  });
});

describe('ajv, the body validator, is loaded only to check a body', () => {
  it('not for an operation without one, nor for --help; for one with a body schema', async () => {
    const probe = path.join(home.dir, 'probe.cjs');
    await writeFile(probe, "process.on('exit', () => require('node:fs').writeSync(2, `AJV ${Object.keys(require.cache).some((f) => f.includes('/node_modules/ajv/'))}\\n`));\n");
    const env = { NODE_OPTIONS: `--require ${JSON.stringify(probe)}` }; // the home directory has spaces
    const loaded = async (...args: string[]) => /AJV true/.test((await home.run(['op', '--base-url', platform.baseUrl, ...args], { env })).stderr);
    expect(await loaded('getCourse', '--courseId', 'course-101')).toBe(false);
    expect(await loaded('updateCourse', '--help')).toBe(false);
    expect(await loaded('updateCourse', '--courseId', 'course-101', '-F', 'seats=4')).toBe(true);
  });
});

describe('plat op lists, and describes an operation from the document', () => {
  it('plat op <operationId> --help: summary, description, parameters with types and defaults, scopes, example', async () => {
    const result = await op('listEnrolments', '--help');
    expect(result.code).toBe(0);
    // Fitted to the terminal's width (80 here, test/ui/help-width.test.ts): sentences compared word by word.
    const words = result.stdout.replace(/\s+/g, ' ');
    expect(words).toContain('GET /api/courses/{courseId}/enrolments — List who is enrolled in a course');
    expect(words).toContain('Readable with students:read and courses:read together, or with members:read alone.');
    expect(result.stdout).toMatch(/--limit <integer> +query, default 20\. at most this many/);
    expect(result.stdout).toMatch(/--status <active\|completed> +query\./);
    expect(words).toContain('Scopes: courses:read + students:read, or members:read (also callable without a token, as anonymous).');
    expect(result.stdout).toContain('$ plat op listEnrolments --courseId course-101');
    const body = await op('updateCourse', '--help');
    expect(body.stdout).toMatch(/Request body \(application\/json, required\):\n {2}title +a string\. the title people see\n {2}seats +an integer from 1 to 10000/);
    expect(apiRequests()).toBe(0);
  });

  it("every operation's --help example passes plat's own checks (never exit 2)", async () => {
    const { OPERATIONS } = await import('../platform/operations.mjs');
    /** POSIX words of the example line: plat's shellQuote uses single quotes only. */
    const words = (line: string) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    for (const { operationId } of OPERATIONS) {
      const help = await op(operationId, '--help');
      const example = /\n {2}\$ plat (op .*)\n/.exec(help.stdout)?.[1];
      expect(example, operationId).toBeDefined();
      const result = await op(...words(example!).slice(1), '--anonymous');
      expect(result.code, `${example}: ${result.stderr}`).not.toBe(2);
    }
  }, scaled(120_000));

  it('plat op [filter] lists operationIds (plat api is gh api\'s shape now, not a listing)', async () => {
    const listed = await op('enrol');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^listEnrolments\s+GET\s+\/api\/courses\/\{courseId\}\/enrolments\s+.*courses:read students:read \| members:read$/m);
    const refreshed = await op('enrol', '--refresh');
    expect(refreshed.stdout).toBe(listed.stdout);
    expect(platform.stats.count('GET /openapi.json'), JSON.stringify(platform.stats.keys())).toBe(2);
    const typo = await op('listEnrolmnts');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/no operation "listEnrolmnts"\. Did you mean listEnrolments\?/);
  });
});

describe('the OpenAPI cache', () => {
  const cacheFile = async () => {
    const { readdir } = await import('node:fs/promises');
    const dir = path.join(home.configDir, 'cache');
    return path.join(dir, (await readdir(dir)).find((f) => /^openapi-[0-9a-f]+\.json$/.test(f))!);
  };
  const age = async (ms: number) => {
    const file = await cacheFile();
    const cached = JSON.parse(await readFile(file, 'utf8'));
    cached.fetchedAt -= ms;
    await writeFile(file, JSON.stringify(cached));
  };
  const seen: Array<string | undefined> = [];
  const watch = () => {
    seen.length = 0;
    platform.override('/openapi.json', (req) => {
      seen.push(req.headers['if-none-match']);
      return false;
    });
  };

  it('is reused for an hour, then revalidated with If-None-Match (a 304 renews it)', async () => {
    watch();
    expect((await op()).code).toBe(0);
    expect((await op('getCourse', '--courseId', 'course-101')).code).toBe(0);
    expect(seen).toEqual([undefined]);
    await age(61 * 60 * 1000);
    expect((await op()).code).toBe(0);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatch(/^"[^"]+"$/);
    expect((await op()).code).toBe(0);
    expect(seen).toHaveLength(2); // renewed by the 304: fresh again
  });

  it('keeps the details plat op needs beside the small index everything else reads; without them plat op downloads again', async () => {
    watch();
    expect((await op('getCourse', '--courseId', 'course-101')).code).toBe(0);
    const index = await readFile(await cacheFile(), 'utf8');
    expect(index).toContain('"operationId":"getCourse"');
    expect(index).not.toContain('"parameters"');
    const details = (await cacheFile()).replace(/\.json$/, '.details.json');
    expect(await readFile(details, 'utf8')).toContain('"name":"courseId"');
    await writeFile(details, '{"format": 3, "operations": []}');
    expect((await op()).code).toBe(0); // the listing needs no details
    expect(seen).toHaveLength(1);
    expect((await op('getCourse', '--courseId', 'course-101')).code).toBe(0);
    expect(seen).toEqual([undefined, undefined]); // downloaded whole again, not revalidated
  });

  it('a document that cannot be read or understood never replaces a good copy', async () => {
    expect((await op()).code).toBe(0);
    const good = await readFile(await cacheFile(), 'utf8');
    platform.override('/openapi.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"openapi": "3.1.0", "paths": ');
      return true;
    });
    const refreshed = await op('--refresh');
    expect(refreshed.code).toBe(1);
    expect(refreshed.stderr).toMatch(/is not JSON, so plat cannot read the API's operations from it\. plat kept the copy it had/);
    expect(await readFile(await cacheFile(), 'utf8')).toBe(good);

    platform.clearOverrides();
    platform.override('/openapi.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ openapi: '4.0.0', paths: {} }));
      return true;
    });
    await age(2 * 60 * 60 * 1000);
    const stale = await op('getCourse', '--courseId', 'course-101');
    expect(stale.code, stale.stderr).toBe(0);
    expect(stale.stderr).toMatch(/warning: .*is not an OpenAPI document \(it is OpenAPI 4\.0\.0, which plat does not read\)\. Using the copy from/);
    expect(JSON.parse(await readFile(await cacheFile(), 'utf8')).operations).toEqual(JSON.parse(good).operations);
  });
});

describe('plat scopes plan and plat login --for', () => {
  it('plans the least set over security alternatives and marks what the session holds', async () => {
    let result = await home.run(['scopes', 'plan', 'listEnrolments', 'getSchoolReport', '--base-url', platform.baseUrl, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      loggedIn: false,
      scopes: [
        { name: 'analytics:read', held: false },
        { name: 'members:read', held: false },
      ],
      missing: ['analytics:read', 'members:read'],
      operations: [
        { operationId: 'listEnrolments', satisfiedBy: ['members:read'] },
        { operationId: 'getSchoolReport', satisfiedBy: ['analytics:read'] },
      ],
    });

    await login('--scope', 'school:read');
    result = await home.run(['scopes', 'plan', 'listEnrolments,getSchoolReport']);
    expect(result.code).toBe(0);
    // school:read, already held, covers the report as well as analytics:read would
    expect(result.stdout).toMatch(/^members:read\s*\nschool:read\s+held\n$/);
    expect(result.stderr).toContain('To add members:read: plat login --for listEnrolments --for getSchoolReport');
  });

  it('refuses an operation the document does not have (exit 2)', async () => {
    const result = await home.run(['scopes', 'plan', 'listEnrolments', 'nope', '--base-url', platform.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/The platform's API has no operation "nope"/);
    const none = await home.run(['scopes', 'plan', '--base-url', platform.baseUrl]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/Name at least one operation: plat scopes plan <operationId>…/);
    const asked = platform.authorizations.length;
    const login = await home.login(platform, ['--for', 'nope']);
    expect(login.code).toBe(2);
    expect(platform.authorizations).toHaveLength(asked); // refused before anyone was asked to approve
  });

  it('--for asks for exactly the planned set plus openid', async () => {
    await login('--for', 'listEnrolments', '--for', 'getSchoolReport');
    // offline_access joins every login on a server that lists it (the contract); nothing else may.
    expect(lastRequestedScopes().filter((s) => s !== 'offline_access')).toEqual(['analytics:read', 'members:read', 'openid']);
    const result = await home.run(['op', 'getSchoolReport', '--year', '2025']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ year: 2025 });
  });

  it('--for after a logout asks for the plan alone: the ended session\'s scopes are not held any more', async () => {
    await login('--scope', 'school:read', '--scope', 'courses:read');
    expect((await home.run(['logout'])).code).toBe(0);
    await login('--for', 'listEnrolments', '--for', 'getSchoolReport');
    expect(lastRequestedScopes().filter((s) => s !== 'offline_access')).toEqual(['analytics:read', 'members:read', 'openid']);
  });

  it('--for on an existing session keeps what it holds and adds the plan (as --add-scope)', async () => {
    await login('--scope', 'courses:read');
    const granted = lastRequestedScopes();
    await login('--for', 'updateCourse');
    expect(lastRequestedScopes().filter((s) => s !== 'offline_access')).toEqual(
      [...new Set([...granted, 'courses:write'])].filter((s) => s !== 'offline_access').sort(),
    );
  });
});
