// Paginated list endpoints, one per pagination style an API may use, over generated courses, for `plat call
// --paginate`. Every style serves the same list: course n (1-based) is { id: "course-000n", n, title, public }.
//
//   GET /api/lists/link        a top-level array; RFC 8288 Link header with rel="next" (and first/prev/last)
//   GET /api/lists/cursor      { data: [...], meta: { next_cursor } }            next page: ?cursor=<next_cursor>
//   GET /api/lists/next        { count, results: [...], next, previous }         next: an absolute URL or null
//   GET /api/lists/links       { data: [...], links: { self, next } }            next: a relative URL, absent at the end
//   GET /api/lists/pages       { page, per_page, total_pages, courses: [...] }   next page: ?page=<page + 1>
//   GET /api/lists/odata       { value: [...], "@odata.nextLink" }               next: an absolute URL
//   GET /api/lists/array       a top-level array, no Link header: one page holding everything
//   GET /api/lists/custom      { result: { rows: [...] }, paging: { after } }     only with --items/--next: ?after=<after>
//   GET /api/lists/ambiguous   { courses: [...], teachers: [...], next }          two arrays: needs --items
//   GET /api/lists/loop        like "links", but page 3 links back to page 2
//   GET /api/lists/elsewhere   like "next", but page 2's next URL is ?next_origin=<origin> on that origin
//
// Query: per_page (1-1000, default 10), total (0-1000000, default 95), delay_ms (0-5000) before each answer,
// next_origin (elsewhere). These are carried into every next link. Object bodies carry `viewer`: the caller's
// subject, or null when anonymous. Reading needs nothing; a token must be valid and hold courses:read.
// Knobs (platform.lists): fail = { page, status, times, retryAfter } answers that page's first `times` requests
// with `status` (a Retry-After header when retryAfter is set); served counts the pages answered (any status), busyMs
// the time spent answering them.

const STYLES = new Set(['link', 'cursor', 'next', 'links', 'pages', 'odata', 'array', 'custom', 'ambiguous', 'loop', 'elsewhere']);

/** @typedef {{ page: number, status: number, times: number, retryAfter?: string }} FailKnob */

export function createListKnobs() {
  return {
    /** @type {FailKnob | null} */
    fail: null,
    /** Pages answered, by style: { link: 12, … } */
    served: /** @type {Record<string, number>} */ ({}),
    /** Milliseconds spent answering pages, from the request's arrival to the last byte written (for the benchmark). */
    busyMs: 0,
    reset() {
      this.fail = null;
      this.served = {};
      this.busyMs = 0;
    },
  };
}

/** @param {number} n */
function course(n) {
  return { id: `course-${String(n).padStart(4, '0')}`, n, title: `Course ${n}`, public: n % 3 !== 0 };
}

/**
 * @param {URLSearchParams} q
 * @param {string} name
 * @param {number} fallback
 * @param {number} max
 */
function intParam(q, name, fallback, max, min = 0) {
  const raw = q.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < min || Number(raw) > max) return NaN;
  return Number(raw);
}

/**
 * @param {object} deps
 * @param {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, scope: string | null) => Promise<({ anonymous: true } | { anonymous: false, sub: string }) | null>} deps.authorize
 * @param {(res: import('node:http').ServerResponse, status: number, body: unknown, headers?: Record<string, string>) => void} deps.sendJson
 * @param {ReturnType<typeof createListKnobs>} deps.knobs
 */
export function createLists({ authorize, sendJson, knobs }) {
  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {URL} url
   * @returns {Promise<boolean>}
   */
  return async function handleLists(req, res, url) {
    const match = /^\/api\/lists\/([a-z]+)$/.exec(url.pathname);
    if (!match || !STYLES.has(match[1] ?? '')) return false;
    const style = /** @type {string} */ (match[1]);
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      knobs.busyMs += Number(process.hrtime.bigint() - started) / 1e6;
    });
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'GET' });
      return true;
    }
    const q = url.searchParams;
    const perPage = intParam(q, 'per_page', 10, 1000, 1);
    const total = intParam(q, 'total', 95, 1_000_000);
    const delay = intParam(q, 'delay_ms', 0, 5000);
    if ([perPage, total, delay].some(Number.isNaN)) {
      sendJson(res, 400, { error: 'invalid_request', error_description: 'per_page must be 1-1000, total 0-1000000, delay_ms 0-5000' });
      return true;
    }
    const pageCount = Math.max(1, Math.ceil(total / perPage));
    const page = pageOf(style, q, perPage);
    if (!Number.isSafeInteger(page) || page < 1 || page > pageCount) {
      sendJson(res, 400, { error: 'invalid_request', error_description: `no such page (1-${pageCount})` });
      return true;
    }

    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    knobs.served[style] = (knobs.served[style] ?? 0) + 1;
    const fail = knobs.fail;
    if (fail && fail.page === page && fail.times > 0) {
      fail.times--;
      /** @type {Record<string, string>} */
      const headers = fail.retryAfter ? { 'retry-after': fail.retryAfter } : {};
      // A 401 says why, as the real API does: the token (whatever it was) is not accepted.
      if (fail.status === 401) headers['www-authenticate'] = 'Bearer error="invalid_token", error_description="injected: token rejected"';
      sendJson(res, fail.status, { error: fail.status === 401 ? 'invalid_token' : 'injected', error_description: `page ${page} fails on purpose` }, headers);
      return true;
    }
    const caller = await authorize(req, res, 'courses:read');
    if (!caller) return true;
    const viewer = caller.anonymous ? null : caller.sub;

    const items = [];
    const first = style === 'array' ? 1 : (page - 1) * perPage + 1;
    const last = style === 'array' ? total : Math.min(total, page * perPage);
    for (let n = first; n <= last; n++) items.push(course(n));
    const hasNext = style !== 'array' && page < pageCount;

    /** The same list's page p, carrying the caller's parameters (absolute). */
    const pageUrl = (/** @type {number} */ p, /** @type {string} */ param = 'page', /** @type {string} */ value = String(p)) => {
      const next = new URL(url);
      for (const key of ['page', 'cursor', 'offset', 'after', 'skip']) next.searchParams.delete(key);
      next.searchParams.set(param, value);
      return next;
    };
    const cursorOf = (/** @type {number} */ p) => Buffer.from(`page:${p}`).toString('base64url');

    switch (style) {
      case 'link': {
        const links = [`<${pageUrl(1)}>; rel="first"`, `<${pageUrl(pageCount)}>; rel="last"`];
        if (page > 1) links.push(`<${pageUrl(page - 1)}>; rel="prev"`);
        if (hasNext) links.push(`<${pageUrl(page + 1)}>; rel="next"`);
        sendJson(res, 200, items, { link: links.join(', ') });
        return true;
      }
      case 'array':
        sendJson(res, 200, items);
        return true;
      case 'cursor':
        sendJson(res, 200, { viewer, data: items, meta: { per_page: perPage, next_cursor: hasNext ? cursorOf(page + 1) : null } });
        return true;
      case 'next':
      case 'elsewhere': {
        let next = hasNext ? pageUrl(page + 1, 'offset', String(page * perPage)).href : null;
        const origin = q.get('next_origin');
        if (style === 'elsewhere' && page === 2 && next && origin) next = `${origin}${new URL(next).pathname}${new URL(next).search}`;
        sendJson(res, 200, { viewer, count: total, results: items, next, previous: page > 1 ? pageUrl(page - 1, 'offset', String((page - 2) * perPage)).href : null });
        return true;
      }
      case 'links':
      case 'loop': {
        const target = style === 'loop' && page === 3 ? 2 : page + 1;
        const rel = (/** @type {URL} */ u) => `${u.pathname}${u.search}`;
        const links = { self: rel(pageUrl(page, 'skip', String((page - 1) * perPage))), ...(hasNext ? { next: rel(pageUrl(target, 'skip', String((target - 1) * perPage))) } : {}) };
        sendJson(res, 200, { viewer, data: items, links });
        return true;
      }
      case 'pages':
        sendJson(res, 200, { viewer, page, per_page: perPage, total_pages: pageCount, total, courses: items });
        return true;
      case 'odata':
        sendJson(res, 200, {
          '@odata.context': `${url.origin}/api/$metadata#courses`,
          viewer,
          value: items,
          ...(hasNext ? { '@odata.nextLink': pageUrl(page + 1, 'skip', String(page * perPage)).href } : {}),
        });
        return true;
      case 'custom':
        sendJson(res, 200, { viewer, result: { rows: items, columns: ['id', 'n', 'title', 'public'] }, paging: { after: hasNext ? `n${page * perPage}` : null } });
        return true;
      case 'ambiguous':
        sendJson(res, 200, { viewer, courses: items, teachers: [{ id: 'teacher-1' }], next: hasNext ? pageUrl(page + 1).href : null });
        return true;
      default:
        return false;
    }
  };
}

/**
 * Which page a request asks for, in the style's own terms.
 * @param {string} style
 * @param {URLSearchParams} q
 * @param {number} perPage
 */
function pageOf(style, q, perPage) {
  const offsetPage = (/** @type {string | null} */ raw) => (raw === null ? 1 : /^\d{1,9}$/.test(raw) && Number(raw) % perPage === 0 ? Number(raw) / perPage + 1 : NaN);
  switch (style) {
    case 'cursor': {
      const cursor = q.get('cursor');
      if (cursor === null) return 1;
      const m = /^page:(\d{1,7})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
      return m ? Number(m[1]) : NaN;
    }
    case 'next':
    case 'elsewhere':
      return offsetPage(q.get('offset'));
    case 'links':
    case 'loop':
    case 'odata':
      return offsetPage(q.get('skip'));
    case 'custom': {
      const after = q.get('after');
      if (after === null) return 1;
      const m = /^n(\d{1,7})$/.exec(after);
      return m ? offsetPage(m[1] ?? '') : NaN;
    }
    case 'array':
      return 1;
    default: {
      const raw = q.get('page');
      return raw === null ? 1 : /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
    }
  }
}

/** OpenAPI path items for these endpoints (merged into /openapi.json's paths). */
export function listPaths() {
  const common = [
    { name: 'per_page', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 10 } },
    { name: 'total', in: 'query', required: false, description: 'how many courses the generated list holds', schema: { type: 'integer', minimum: 0, maximum: 1000000, default: 95 } },
    { name: 'delay_ms', in: 'query', required: false, description: 'wait this long before answering each page', schema: { type: 'integer', minimum: 0, maximum: 5000 } },
  ];
  const courseSchema = {
    type: 'object',
    properties: { id: { type: 'string' }, n: { type: 'integer' }, title: { type: 'string' }, public: { type: 'boolean' } },
  };
  const items = { type: 'array', items: courseSchema };
  /**
   * @param {string} operationId
   * @param {string} summary
   * @param {object} schema
   * @param {object[]} [extra]
   * @param {Record<string, unknown>} [headers]
   */
  const op = (operationId, summary, schema, extra = [], headers = undefined) => ({
    get: {
      operationId,
      summary,
      tags: ['lists'],
      security: [{ oauth2: ['courses:read'] }, {}],
      parameters: [...common, ...extra],
      responses: {
        200: { description: 'One page of courses', ...(headers ? { headers } : {}), content: { 'application/json': { schema } } },
        400: { description: 'invalid_request: a bad parameter or a page that does not exist' },
        401: { description: 'invalid_token: the bearer token is invalid, expired or revoked' },
        403: { description: 'insufficient_scope: the token lacks courses:read' },
      },
    },
  });
  const q = (/** @type {string} */ name, /** @type {string} */ description) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } });
  const linkHeader = { Link: { description: 'RFC 8288 links: rel="next" (absent on the last page), "prev", "first", "last"', schema: { type: 'string' } } };
  const obj = (/** @type {Record<string, unknown>} */ properties) => ({ type: 'object', properties: { viewer: { type: ['string', 'null'] }, ...properties } });
  return {
    '/api/lists/link': op('listCoursesLinkHeader', 'List courses: a JSON array, next page in the Link header', items, [q('page', 'page number, from 1')], linkHeader),
    '/api/lists/cursor': op('listCoursesCursor', 'List courses: { data, meta.next_cursor }', obj({ data: items, meta: { type: 'object', properties: { next_cursor: { type: ['string', 'null'] } } } }), [q('cursor', 'meta.next_cursor of the previous page')]),
    '/api/lists/next': op('listCoursesNextUrl', 'List courses: { results, next } with an absolute next URL', obj({ count: { type: 'integer' }, results: items, next: { type: ['string', 'null'] }, previous: { type: ['string', 'null'] } }), [q('offset', 'items to skip')]),
    '/api/lists/links': op('listCoursesLinksNext', 'List courses: { data, links.next } with a relative next URL', obj({ data: items, links: { type: 'object', properties: { self: { type: 'string' }, next: { type: 'string' } } } }), [q('skip', 'items to skip')]),
    '/api/lists/pages': op('listCoursesPageNumbers', 'List courses: { page, total_pages, courses }', obj({ page: { type: 'integer' }, per_page: { type: 'integer' }, total_pages: { type: 'integer' }, total: { type: 'integer' }, courses: items }), [q('page', 'page number, from 1')]),
    '/api/lists/odata': op('listCoursesOData', 'List courses: { value, @odata.nextLink }', obj({ value: items, '@odata.nextLink': { type: 'string' } }), [q('skip', 'items to skip')]),
    '/api/lists/array': op('listCoursesArray', 'List courses: every course in one JSON array, no paging', items),
    '/api/lists/custom': op('listCoursesCustom', 'List courses: { result.rows, paging.after } (needs --items and --next)', obj({ result: { type: 'object', properties: { rows: items } }, paging: { type: 'object', properties: { after: { type: ['string', 'null'] } } } }), [q('after', 'paging.after of the previous page')]),
    '/api/lists/ambiguous': op('listCoursesAmbiguous', 'List courses beside another array (needs --items)', obj({ courses: items, teachers: { type: 'array' }, next: { type: ['string', 'null'] } }), [q('page', 'page number, from 1')]),
    '/api/lists/loop': op('listCoursesLoop', 'A broken list: page 3 links back to page 2', obj({ data: items, links: { type: 'object' } }), [q('skip', 'items to skip')]),
    '/api/lists/elsewhere': op('listCoursesElsewhere', "A list whose page 2 links to another origin's page 3", obj({ results: items, next: { type: ['string', 'null'] } }), [q('offset', 'items to skip'), q('next_origin', 'the origin page 2 links to')]),
  };
}
