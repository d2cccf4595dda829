// The platform's operations, one entry each: what /openapi.json says about it, and — for the operations added
// here — how it is served. Entries without `handle` are served by the route table in api.mjs; the document is
// generated from this list alone, so adding an endpoint means appending one entry (test/repo/platform.test.ts checks
// that every route the platform answers is described).

const SCHOOL_REPORT = { courses: 3, students: 2, completionRate: 0.87 };
const LEVELS = ['beginner', 'intermediate', 'advanced'];
const LANGUAGES = ['en', 'de', 'fr'];
const ENROLMENTS = [
  { courseId: 'course-101', studentId: 'student-1', status: 'active' },
  { courseId: 'course-101', studentId: 'student-2', status: 'completed' },
  { courseId: 'course-102', studentId: 'student-2', status: 'active' },
];

/**
 * @typedef {{ name: string, in: 'path' | 'query' | 'header', required?: boolean, description?: string, schema: Record<string, unknown> }} Parameter
 * @typedef {{ anonymous: true } | { anonymous: false, sub: string, clientId: string, scopes: Set<string> }} Caller
 * @typedef {object} Served  what a handler is given
 * @property {import('node:http').IncomingMessage} req
 * @property {import('node:http').ServerResponse} res
 * @property {URL} url
 * @property {Record<string, string>} path  the path parameters
 * @property {Caller} caller
 * @property {(status: number, body: unknown, headers?: Record<string, string>) => void} send
 * @property {() => Promise<unknown>} json  the request body as JSON (undefined when empty; throws on bad JSON)
 * @typedef {object} OperationEntry
 * @property {string} operationId
 * @property {'get' | 'post' | 'put' | 'patch' | 'delete'} method
 * @property {string} path  an OpenAPI path template
 * @property {string} summary
 * @property {string} [description]
 * @property {string[][]} security  alternatives: each the scopes a token needs; [] = anonymous allowed
 * @property {Parameter[]} [parameters]
 * @property {Record<string, unknown>} [body]  the JSON request body's schema
 * @property {boolean} [bodyRequired]
 * @property {Record<string, { description: string }>} [responses]
 * @property {(served: Served) => Promise<void> | void} [handle]  absent: api.mjs's route table serves it
 */

/** Scopes for a token, anonymous allowed (the spec serves requests without a token). */
const open = (/** @type {string[]} */ ...scopes) => [scopes, []];

/** @param {string} name @param {string} description @param {Record<string, unknown>} schema @param {boolean} [required] @returns {Parameter} */
const query = (name, description, schema, required = false) => ({ name, in: 'query', required, description, schema });

const courseId = /** @type {Parameter} */ ({ name: 'courseId', in: 'path', required: true, description: 'the course, e.g. course-101', schema: { type: 'string', pattern: '^course-[0-9a-z]+$', examples: ['course-101'] } });

const COURSE_FIELDS = {
  title: { type: 'string', minLength: 1, maxLength: 200, description: 'the title people see' },
  seats: { type: 'integer', minimum: 1, maximum: 10000, description: 'how many may enrol' },
  level: { type: 'string', enum: LEVELS },
  public: { type: 'boolean', default: false, description: 'visible without signing in' },
};

const echoResponses = { 200: { description: 'the request as the server saw it' } };

/** @type {OperationEntry[]} */
export const OPERATIONS = [
  // ---- served by api.mjs's route table
  { operationId: 'listCourses', method: 'get', path: '/api/courses', summary: 'List courses', security: open('courses:read') },
  {
    operationId: 'createCourse',
    method: 'post',
    path: '/api/courses',
    summary: 'Create a course (echoes the JSON body with an id)',
    security: open('courses:write'),
    body: { type: 'object', required: ['title'], properties: COURSE_FIELDS, additionalProperties: true },
    bodyRequired: true,
    responses: { 201: { description: 'Created' } },
  },
  { operationId: 'listStudents', method: 'get', path: '/api/students', summary: 'List students', security: open('students:read') },
  { operationId: 'getAnalytics', method: 'get', path: '/api/analytics', summary: 'Read analytics', security: open('analytics:read') },
  ...(/** @type {const} */ (['get', 'post', 'put', 'patch', 'delete'])).map((method) => ({
    operationId: method === 'get' ? 'echo' : `echo${method[0].toUpperCase()}${method.slice(1)}`,
    method,
    path: '/api/echo',
    summary: `Echo a ${method.toUpperCase()} request (method, path, query, headers with the token redacted, body)`,
    security: open(),
    responses: echoResponses,
  })),
  {
    operationId: 'download',
    method: 'get',
    path: '/api/download',
    summary: 'Stream N bytes of pattern data',
    security: open(),
    parameters: [query('bytes', 'how many bytes', { type: 'integer', minimum: 0 }, true)],
  },
  ...(/** @type {const} */ (['get', 'post', 'put', 'patch', 'delete'])).map((method) => ({
    operationId: method === 'get' ? 'redirect' : `redirect${method[0].toUpperCase()}${method.slice(1)}`,
    method,
    path: '/api/redirect',
    summary: 'Redirect (302) to the given URL',
    security: open(),
    parameters: [query('to', 'where to', { type: 'string' }, true)],
    responses: { 302: { description: 'Found' } },
  })),
  ...(/** @type {const} */ (['get', 'post', 'put', 'patch', 'delete'])).map((method) => ({
    operationId: method === 'get' ? 'status' : `status${method[0].toUpperCase()}${method.slice(1)}`,
    method,
    path: '/api/status/{code}',
    summary: 'Respond with the given HTTP status',
    security: open(),
    parameters: [
      { name: 'code', in: /** @type {const} */ ('path'), required: true, description: 'the status to answer with', schema: { type: 'integer', minimum: 200, maximum: 599 } },
      query('retry_after', 'a Retry-After header to send, in seconds', { type: 'integer', minimum: 0 }),
    ],
  })),

  // ---- served here
  {
    operationId: 'getCourse',
    method: 'get',
    path: '/api/courses/{courseId}',
    summary: 'Read one course',
    description: 'One course by its id. Members-only courses are visible only with a token.',
    security: open('courses:read'),
    parameters: [
      courseId,
      query('include', 'related records to embed', { type: 'string', enum: ['lessons', 'lecturers'] }),
      { name: 'Accept-Language', in: 'header', description: 'language of the titles', schema: { type: 'string', enum: LANGUAGES, default: 'en' } },
    ],
    responses: { 200: { description: 'the course' }, 404: { description: 'no such course' } },
    handle({ caller, path, url, req, send }) {
      const course = COURSES_BY_ID.get(path.courseId ?? '');
      if (!course || (!course.public && caller.anonymous)) return send(404, { error: 'not_found', error_description: `no course ${path.courseId}` });
      const include = url.searchParams.get('include');
      send(200, {
        course: { ...course, ...(include ? { [include]: [] } : {}) },
        language: req.headers['accept-language'] ?? 'en',
        authenticated: !caller.anonymous,
      });
    },
  },
  {
    operationId: 'updateCourse',
    method: 'patch',
    path: '/api/courses/{courseId}',
    summary: 'Change a course',
    description: 'Changes the fields given and answers with the course as it is now.',
    security: [['courses:write']],
    parameters: [courseId],
    body: { type: 'object', properties: COURSE_FIELDS, additionalProperties: false, minProperties: 1 },
    bodyRequired: true,
    async handle({ path, json, send }) {
      const course = COURSES_BY_ID.get(path.courseId ?? '');
      if (!course) return send(404, { error: 'not_found', error_description: `no course ${path.courseId}` });
      const changes = await json();
      if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return send(400, { error: 'invalid_request', error_description: 'body must be a JSON object' });
      send(200, { course: { ...course, ...changes } });
    },
  },
  {
    operationId: 'listEnrolments',
    method: 'get',
    path: '/api/courses/{courseId}/enrolments',
    summary: 'List who is enrolled in a course',
    description: 'Readable with students:read and courses:read together, or with members:read alone.',
    security: [['students:read', 'courses:read'], ['members:read'], []],
    parameters: [
      courseId,
      query('status', 'only enrolments in this state', { type: 'string', enum: ['active', 'completed'] }),
      query('limit', 'at most this many', { type: 'integer', minimum: 1, maximum: 100, default: 20 }),
    ],
    handle({ caller, path, url, send }) {
      const status = url.searchParams.get('status');
      const limit = Number(url.searchParams.get('limit') ?? 20);
      if (status && status !== 'active' && status !== 'completed') return send(400, { error: 'invalid_request', error_description: 'status must be active or completed' });
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) return send(400, { error: 'invalid_request', error_description: 'limit must be 1-100' });
      const rows = caller.anonymous ? [] : ENROLMENTS.filter((e) => e.courseId === path.courseId && (!status || e.status === status));
      send(200, { enrolments: rows.slice(0, limit) });
    },
  },
  {
    operationId: 'getSchoolReport',
    method: 'get',
    path: '/api/reports/school',
    summary: "The school's yearly report",
    description: 'Readable with analytics:read or with school:read.',
    security: [['analytics:read'], ['school:read']],
    parameters: [query('year', 'the school year it covers', { type: 'integer', minimum: 2000, maximum: 2100 }, true)],
    handle({ url, send }) {
      const year = Number(url.searchParams.get('year'));
      if (!Number.isInteger(year)) return send(400, { error: 'invalid_request', error_description: 'year is required' });
      send(200, { year, report: SCHOOL_REPORT });
    },
  },
  ...(/** @type {const} */ (['get', 'post'])).map((method) => ({
    operationId: method === 'get' ? 'getUserInfo' : 'postUserInfo',
    method,
    path: '/api/oauth/userinfo',
    summary: 'OpenID Connect UserInfo (served by the authorization server)',
    security: [['openid']],
  })),
];

const COURSES_BY_ID = new Map(
  [
    { id: 'course-101', title: 'Notes on the Analytical Engine', public: true, level: 'beginner', seats: 30 },
    { id: 'course-102', title: 'Bernoulli Numbers, Step by Step', public: true, level: 'intermediate', seats: 20 },
    { id: 'course-201', title: 'Poetical Science (members only)', public: false, level: 'advanced', seats: 12 },
  ].map((c) => [c.id, c]),
);

/**
 * The OpenAPI `paths` object for the list.
 * @param {OperationEntry[]} entries
 */
export function pathsOf(entries) {
  /** @type {Record<string, Record<string, unknown>>} */
  const paths = {};
  for (const op of entries) {
    const anyScopes = op.security.some((alternative) => alternative.length > 0);
    paths[op.path] ??= {};
    paths[op.path][op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(op.parameters?.length ? { parameters: op.parameters } : {}),
      ...(op.body ? { requestBody: { required: Boolean(op.bodyRequired), content: { 'application/json': { schema: op.body } } } } : {}),
      security: op.security.map((scopes) => (scopes.length > 0 ? { oauth2: scopes } : {})),
      responses: {
        ...(op.responses ?? { 200: { description: 'OK' } }),
        ...(anyScopes
          ? {
              401: { description: 'invalid_token: the bearer token is invalid, expired or revoked' },
              403: { description: 'insufficient_scope: the token lacks a scope the operation needs' },
            }
          : {}),
      },
    };
  }
  return paths;
}

/** @param {string} template */
function matcher(template) {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => /** @type {string} */ (m[1]));
  const source = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('([^/]+)');
  const pattern = new RegExp(`^${source}$`);
  return (/** @type {string} */ pathname) => {
    const m = pattern.exec(pathname);
    if (!m) return undefined;
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(/** @type {string} */ (m[i + 1]))]));
  };
}

/**
 * Serves the entries that have a handler: matches the path, checks the token against the entry's security
 * alternatives (401 as api.mjs does; 403 naming a scope of the first alternative when none is met), then handles.
 * @param {{
 *   authenticate: (req: import('node:http').IncomingMessage) => Promise<Caller | { status: 401 }>,
 *   authorize: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, scope: string | null) => Promise<Caller | null>,
 *   sendJson: (res: import('node:http').ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void,
 *   readBody: (req: import('node:http').IncomingMessage, limit: number) => Promise<Buffer | null>,
 * }} api
 */
export function createOperationHandler(api) {
  const served = OPERATIONS.filter((op) => op.handle).map((op) => ({ op, match: matcher(op.path) }));
  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {URL} url
   * @returns {Promise<boolean>} false when no entry here serves the path
   */
  return async function handleOperation(req, res, url) {
    const onPath = served.map(({ op, match }) => ({ op, path: match(url.pathname) })).filter((m) => m.path);
    if (onPath.length === 0) return false;
    const method = req.method === 'HEAD' ? 'get' : (req.method ?? 'GET').toLowerCase();
    const found = onPath.find((m) => m.op.method === method);
    if (!found?.path || !found.op.handle) {
      req.resume();
      api.sendJson(res, 405, { error: 'method_not_allowed' }, { allow: onPath.map((m) => m.op.method.toUpperCase()).join(', ') });
      return true;
    }
    const { op } = found;
    const who = await api.authenticate(req);
    /** @type {Caller | null} */
    let caller;
    if ('status' in who) caller = await api.authorize(req, res, null); // answers the 401
    else if (who.anonymous) caller = who;
    else {
      const met = op.security.some((alt) => alt.every((scope) => who.scopes.has(scope)));
      const lacking = (op.security[0] ?? []).find((scope) => !who.scopes.has(scope)) ?? null;
      caller = met ? who : await api.authorize(req, res, lacking);
    }
    if (!caller) return true;
    if (caller.anonymous && !op.security.some((alt) => alt.length === 0)) {
      req.resume();
      api.sendJson(res, 401, { error: 'unauthorized', error_description: 'this operation needs a token' }, { 'www-authenticate': 'Bearer realm="api"' });
      return true;
    }
    try {
      await op.handle({
        req,
        res,
        url,
        path: found.path,
        caller,
        send: (status, body, headers) => api.sendJson(res, status, body, headers),
        json: async () => {
          const raw = await api.readBody(req, 256 * 1024);
          const text = raw?.toString('utf8') ?? '';
          return text ? JSON.parse(text) : undefined;
        },
      });
    } catch (error) {
      if (!(error instanceof SyntaxError) || res.headersSent) throw error;
      api.sendJson(res, 400, { error: 'invalid_json', error_description: 'request body is not JSON' });
    }
    if (!res.writableEnded && !res.headersSent) req.resume();
    return true;
  };
}
