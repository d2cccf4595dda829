// The small protected API: bearer tokens checked against oidc-provider's own token store, scopes enforced,
// anonymous access without a token (per the spec), plus fault/streaming helpers for client tests.

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose';
import { createOperationHandler } from './operations.mjs';

import { createLists } from './lists.mjs';

const ECHO_LIMIT = 1024 * 1024;
const JSON_LIMIT = 256 * 1024;
const CHUNK_SIZE = 64 * 1024;
// Byte k of every download is k % 256; a chunk is a multiple of 256 bytes long so the pattern continues across chunks.
const PATTERN = Buffer.from(Array.from({ length: CHUNK_SIZE }, (_, i) => i % 256));

const COURSES = [
  { id: 'course-101', title: 'Notes on the Analytical Engine', public: true },
  { id: 'course-102', title: 'Bernoulli Numbers, Step by Step', public: true },
  { id: 'course-201', title: 'Poetical Science (members only)', public: false },
];
const STUDENTS = [
  { id: 'student-1', name: 'Charles Babbage', email: 'charles@example.test' },
  { id: 'student-2', name: 'Mary Somerville', email: 'mary@example.test' },
];

/**
 * @typedef {{ anonymous: true } | { anonymous: false, sub: string, clientId: string, scopes: Set<string> }} Caller
 * @typedef {{ status: 401, error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce', description: string, scheme?: 'DPoP' }} AuthFailure
 */

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
function sendJson(res, status, body, headers = {}) {
  const text = status === 204 || status === 304 ? '' : `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) } : {}),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** @param {string} value */
function quoted(value) {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {number} limit
 * @returns {Promise<Buffer | null>} null when the body is larger than limit
 */
async function readBody(req, limit) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * @param {{ provider: import('./provider.mjs').OidcProvider, baseUrl: string, expiryOf: (token: string) => number | undefined, listKnobs: ReturnType<typeof import('./lists.mjs').createListKnobs>, knobs: import('./index.mjs').Knobs, dpopProofs: import('./index.d.mts').Platform['dpopProofs'] }} setup
 *   expiryOf: when (epoch ms) a token issued in this run expires; oidc-provider's store drops expired tokens
 *   listKnobs: faults of the paginated lists (lists.mjs)
 *   knobs: the platform's knobs (DPoP nonces and clock); dpopProofs: where each accepted DPoP proof is recorded
 */
export function createApi({ provider, baseUrl, expiryOf, listKnobs, knobs, dpopProofs }) {
  const resourceMetadata = `${baseUrl}/.well-known/oauth-protected-resource`;
  const audiences = new Set([baseUrl, `${baseUrl}/`]);
  /** Every jti of an accepted proof: a proof replayed is refused (RFC 9449 §11.1). */
  const seenJti = new Set();
  /** The API's own DPoP nonces (RFC 9449 §9): the current one and the one before it are accepted. */
  const nonces = { current: randomBytes(16).toString('base64url'), previous: '' };
  const newNonce = () => {
    nonces.previous = nonces.current;
    nonces.current = randomBytes(16).toString('base64url');
    return nonces.current;
  };

  /**
   * RFC 9449 §4.3 and §7.1: the proof in the DPoP header of a request that carries a bound token, checked in full.
   * @param {import('node:http').IncomingMessage} req
   * @param {string} token
   * @param {string} jkt  the token's cnf.jkt
   * @returns {Promise<AuthFailure | null>}
   */
  async function checkProof(req, token, jkt) {
    const fail = (/** @type {AuthFailure['error']} */ error, /** @type {string} */ description) => /** @type {AuthFailure} */ ({ status: 401, error, description, scheme: 'DPoP' });
    const proof = req.headers.dpop;
    if (typeof proof !== 'string' || !proof) return fail('invalid_token', 'this token is DPoP-bound: send it with a DPoP proof');
    let verified;
    try {
      verified = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256'] });
    } catch (error) {
      return fail('invalid_dpop_proof', `DPoP proof signature or header invalid (${/** @type {Error} */ (error).message})`);
    }
    const { payload, protectedHeader } = verified;
    if ((await calculateJwkThumbprint(/** @type {any} */ (protectedHeader.jwk))) !== jkt) return fail('invalid_dpop_proof', 'DPoP proof key is not the key the token is bound to');
    if (payload.htm !== req.method) return fail('invalid_dpop_proof', 'DPoP proof htm mismatch');
    const url = new URL(req.url ?? '/', baseUrl);
    if (payload.htu !== `${url.origin}${url.pathname}`) return fail('invalid_dpop_proof', 'DPoP proof htu mismatch');
    const now = Math.floor(Date.now() / 1000) + knobs.dpopClockOffset;
    if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > 60) return fail('invalid_dpop_proof', 'DPoP proof iat is not recent enough');
    if (payload.ath !== createHash('sha256').update(token).digest('base64url')) return fail('invalid_dpop_proof', 'DPoP proof ath mismatch');
    if (typeof payload.jti !== 'string' || !payload.jti) return fail('invalid_dpop_proof', 'DPoP proof has no jti');
    if (knobs.dpopNonce === 'always-new') {
      newNonce();
      return fail('use_dpop_nonce', 'a new nonce is required in the DPoP proof');
    }
    if (knobs.dpopNonce === 'required' && (typeof payload.nonce !== 'string' || (payload.nonce !== nonces.current && payload.nonce !== nonces.previous))) {
      return fail('use_dpop_nonce', 'nonce is required in the DPoP proof');
    }
    if (seenJti.has(payload.jti)) return fail('invalid_dpop_proof', 'DPoP proof jti was used before (replay)');
    seenJti.add(payload.jti);
    dpopProofs.push({ jti: payload.jti, htm: String(payload.htm), htu: String(payload.htu), jkt, ...(typeof payload.nonce === 'string' ? { nonce: payload.nonce } : {}) });
    return null;
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @returns {Promise<Caller | AuthFailure>}
   */
  async function authenticate(req) {
    const header = req.headers.authorization;
    if (header === undefined) return { anonymous: true };
    const match = /^(Bearer|DPoP) +([\x21-\x7e]+) *$/i.exec(header);
    if (!match?.[2]) return { status: 401, error: 'invalid_token', description: 'malformed Authorization header; expected "Bearer <token>"' };

    const value = match[2];
    const dpopScheme = match[1].toLowerCase() === 'dpop';
    const token = await provider.AccessToken.find(value, { ignoreExpiration: true }).catch(() => undefined);
    // RFC 9449 §7.1: a bound token only with the DPoP scheme and a proof by its key; an unbound one never as DPoP.
    if (token?.jkt) {
      if (!dpopScheme) return { status: 401, error: 'invalid_token', description: 'this token is DPoP-bound and cannot be used as a bearer token', scheme: 'DPoP' };
      const refused = await checkProof(req, value, token.jkt);
      if (refused) return refused;
    } else if (token && dpopScheme) {
      return { status: 401, error: 'invalid_token', description: 'this token is not DPoP-bound: send it as a Bearer token' };
    }
    if (!token) {
      const expiry = expiryOf(value);
      const description = expiry !== undefined && expiry <= Date.now() ? 'access token expired' : 'access token is invalid or has been revoked';
      return { status: 401, error: 'invalid_token', description };
    }
    if (token.isExpired) return { status: 401, error: 'invalid_token', description: 'access token expired' };
    const aud = token.aud === undefined ? [] : [token.aud].flat();
    if (aud.length && !aud.some((a) => audiences.has(a))) {
      return { status: 401, error: 'invalid_token', description: 'access token audience is not this API' };
    }
    const grant = token.grantId ? await provider.Grant.find(token.grantId) : undefined;
    if (!grant) return { status: 401, error: 'invalid_token', description: 'the grant behind this access token was revoked' };
    return { anonymous: false, sub: String(token.accountId), clientId: String(token.clientId), scopes: token.scopes };
  }

  /**
   * Authenticates and, for a token-bearing caller, checks the scope. Answers the 401/403 itself.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {string | null} scope
   * @returns {Promise<Caller | null>} null when a challenge was sent
   */
  async function authorize(req, res, scope) {
    const caller = await authenticate(req);
    if ('status' in caller) {
      sendJson(
        res,
        401,
        { error: caller.error, error_description: caller.description },
        {
          'www-authenticate': caller.scheme === 'DPoP'
            ? `DPoP error="${caller.error}", error_description=${quoted(caller.description)}, algs="ES256 ES384 EdDSA PS256 RS256"`
            : `Bearer error="invalid_token", error_description=${quoted(caller.description)}, resource_metadata=${quoted(resourceMetadata)}`,
          ...(knobs?.dpopNonce && knobs.dpopNonce !== 'off' ? { 'dpop-nonce': nonces.current } : {}),
        },
      );
      return null;
    }
    if (!caller.anonymous && scope && !caller.scopes.has(scope)) {
      const description = `the access token lacks the ${scope} scope`;
      sendJson(
        res,
        403,
        { error: 'insufficient_scope', error_description: description, scope },
        {
          'www-authenticate': `Bearer error="insufficient_scope", scope=${quoted(scope)}, error_description=${quoted(description)}, resource_metadata=${quoted(resourceMetadata)}`,
        },
      );
      return null;
    }
    return caller;
  }

  /** @param {Caller} caller */
  const who = (caller) => (caller.anonymous ? { anonymous: true } : { anonymous: false, sub: caller.sub });

  /**
   * @param {import('node:http').ServerResponse} res
   * @param {string[]} allowed
   */
  function methodNotAllowed(res, allowed) {
    sendJson(res, 405, { error: 'method_not_allowed' }, { allow: allowed.join(', ') });
  }

  /** @type {Record<string, (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, url: URL) => Promise<void>>} */
  const routes = {
    async '/api/courses'(req, res) {
      if (req.method === 'GET' || req.method === 'HEAD') {
        const caller = await authorize(req, res, 'courses:read');
        if (!caller) return;
        sendJson(res, 200, { ...who(caller), courses: caller.anonymous ? COURSES.filter((c) => c.public) : COURSES });
        return;
      }
      if (req.method === 'POST') {
        const caller = await authorize(req, res, 'courses:write');
        if (!caller) return;
        const raw = await readBody(req, JSON_LIMIT);
        if (raw === null) return sendJson(res, 413, { error: 'payload_too_large' });
        /** @type {unknown} */
        let body;
        try {
          body = JSON.parse(raw.toString('utf8') || 'null');
        } catch {
          return sendJson(res, 400, { error: 'invalid_json', error_description: 'request body is not JSON' });
        }
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          return sendJson(res, 400, { error: 'invalid_json', error_description: 'request body must be a JSON object' });
        }
        sendJson(res, 201, { ...who(caller), course: { ...body, id: `course-${randomUUID().slice(0, 8)}` } });
        return;
      }
      methodNotAllowed(res, ['GET', 'POST']);
    },

    async '/api/students'(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, ['GET']);
      const caller = await authorize(req, res, 'students:read');
      if (!caller) return;
      sendJson(res, 200, { ...who(caller), students: caller.anonymous ? [] : STUDENTS });
    },

    async '/api/analytics'(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, ['GET']);
      const caller = await authorize(req, res, 'analytics:read');
      if (!caller) return;
      sendJson(res, 200, {
        ...who(caller),
        analytics: caller.anonymous ? { courses: COURSES.filter((c) => c.public).length } : { courses: COURSES.length, students: STUDENTS.length, completionRate: 0.87 },
      });
    },

    async '/api/echo'(req, res, url) {
      const caller = await authorize(req, res, null);
      if (!caller) return;
      const raw = await readBody(req, ECHO_LIMIT);
      if (raw === null) return sendJson(res, 413, { error: 'payload_too_large' });
      /** @type {Record<string, string | string[] | undefined>} */
      const headers = { ...req.headers };
      if (headers.authorization !== undefined) {
        const scheme = String(headers.authorization).split(' ')[0] || 'Bearer';
        headers.authorization = `${/^bearer$/i.test(scheme) ? 'Bearer' : scheme} <redacted>`;
      }
      /** @type {Record<string, string | string[]>} */
      const query = {};
      for (const [k, v] of url.searchParams) {
        const prev = query[k];
        query[k] = prev === undefined ? v : [prev, v].flat();
      }
      sendJson(res, 200, {
        method: req.method,
        path: url.pathname,
        query,
        headers,
        body: raw.toString('utf8'),
        authenticated: !caller.anonymous,
        sub: caller.anonymous ? null : caller.sub,
      });
    },

    async '/api/download'(req, res, url) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, ['GET']);
      const bytesParam = url.searchParams.get('bytes') ?? '';
      if (!/^\d{1,15}$/.test(bytesParam)) {
        return sendJson(res, 400, { error: 'invalid_request', error_description: 'bytes must be a non-negative integer' });
      }
      const caller = await authorize(req, res, null);
      if (!caller) return;
      const total = Number(bytesParam);
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': String(total),
        'content-disposition': 'attachment; filename="download.bin"',
        'cache-control': 'no-store',
      });
      if (req.method === 'HEAD') return void res.end();
      let remaining = total;
      const pump = () => {
        while (remaining > 0 && !res.destroyed) {
          const size = Math.min(CHUNK_SIZE, remaining);
          remaining -= size;
          if (!res.write(size === CHUNK_SIZE ? PATTERN : PATTERN.subarray(0, size))) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    },

    async '/api/redirect'(req, res, url) {
      const to = url.searchParams.get('to');
      if (!to) return sendJson(res, 400, { error: 'invalid_request', error_description: 'missing "to"' });
      req.resume();
      sendJson(res, 302, { location: to }, { location: to });
    },
  };

  // The operations that operations.mjs serves itself (its entries with a handler).
  const handleOperation = createOperationHandler({ authenticate, authorize, sendJson, readBody });

  const handleLists = createLists({ authorize, sendJson, knobs: listKnobs });

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {URL} url
   * @returns {Promise<boolean>} false when the path is not part of this API
   */
  async function handleApi(req, res, url) {
    if (await handleOperation(req, res, url)) return true;
    if (await handleLists(req, res, url)) return true;
    const route = routes[url.pathname];
    if (route) {
      await route(req, res, url);
      return true;
    }
    const status = /^\/api\/status\/(\d{3})$/.exec(url.pathname);
    if (status?.[1]) {
      const code = Number(status[1]);
      req.resume();
      if (code < 200 || code > 599) {
        sendJson(res, 400, { error: 'invalid_request', error_description: 'status must be 200-599' });
        return true;
      }
      const retryAfter = url.searchParams.get('retry_after');
      sendJson(res, code, { status: code }, retryAfter ? { 'retry-after': retryAfter } : {});
      return true;
    }
    return false;
  }
  // The paths of the route table, so a test can check that /openapi.json describes every one of them.
  return Object.assign(handleApi, { routePaths: [...Object.keys(routes), '/api/status/{code}'] });
}
