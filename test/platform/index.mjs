// The reference platform: oidc-provider (the authorization server) and a small protected API behind one plain
// node:http server on 127.0.0.1, with the spec's exact paths, runtime knobs for faults, request statistics and a
// record of every secret so tests can assert none of them leaks.

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

import { createApi } from './api.mjs';
import { driveConsent, driveDeviceConsent } from './consent.mjs';
import { authMarkdown, openApiDocument, protectedResourceMetadata } from './documents.mjs';
import { handleInteraction } from './interaction.mjs';
import { createListKnobs } from './lists.mjs';
import { CONFIDENTIAL_CLIENT_ID, PUBLIC_CLIENT_ID, createProvider } from './provider.mjs';

/**
 * @typedef {object} Knobs
 * @property {number} accessTokenTtl  seconds; read whenever an access token is issued
 * @property {number | undefined} refreshTokenTtl  seconds; undefined = options.refreshTokenTtl
 * @property {boolean} strictRedirectPort  true = loopback redirect URIs must match including the port
 * @property {((requested: string[]) => string[]) | null} grantScopes  narrows what Approve grants
 * @property {'ok' | 'html' | 'truncated' | 'wrong-issuer' | 'missing-endpoints' | 'http-endpoint'} metadata
 * @property {Record<string, unknown> | null} metadataOverrides  members set on both metadata documents after the
 *   `metadata` knob (null = delete the member); null = none
 * @property {'ok' | 'missing'} protectedResourceMetadata
 * @property {'ok' | 'slash-only'} metadataAddress  'slash-only' = the OpenID configuration is served only at
 *   `/.well-known/openid-configuration/` (the address without the slash answers 301 to it, as Django's APPEND_SLASH
 *   does for django-oauth-toolkit) and the RFC 8414 address answers 404
 * @property {boolean} postOnlyMcp  an MCP-style endpoint at /mcp: only POST, a 401 without a token whose
 *   resource_metadata names a protected-resource document at a custom address (/mcp-resource.json, for the
 *   resource <base>/mcp); GET /mcp answers 405 with no challenge, and no well-known address has the document
 * @property {string[] | null | undefined} codeChallengeMethods  undefined = as oidc-provider says; null = omit
 * @property {boolean} issParameterSupported
 * @property {'ok' | 'error-500' | 'error-400-oauth' | 'error-400-plain' | 'no-client-id'} registration
 * @property {'granted' | 'omitted'} tokenResponseScope  'omitted' = token responses carry no `scope` member
 * @property {TokenResponseKnob} tokenResponse  how successful token responses (code and refresh) are mangled after
 *   the server issued the tokens: 'ok', or one fault
 * @property {boolean} clientIdMetadataDocuments  advertise client_id_metadata_document_supported and resolve https
 *   URL client_ids by fetching their documents
 * @property {boolean} clientIdMetadataDocumentsOverHttp  test-only: also http://127.0.0.1 documents
 * @property {string[]} unknownClients  client IDs the server has forgotten (invalid_client)
 * @property {'everywhere' | 'token'} unknownClientsAt  where they are unknown: every endpoint, or the token endpoint only
 * @property {boolean} offlineAccess  list offline_access in scopes_supported and issue refresh tokens only for it
 * @property {'ok' | 'error-400'} revokeUnknownToken  'error-400' = revoking a token the server does not know (any
 *   more) answers 400 invalid_request instead of RFC 7009's 200
 * @property {boolean} rotateRefreshTokens  false = a refresh keeps the refresh token valid and its response carries
 *   no refresh_token member (RFC 6749 §6 allows both); default true
 * @property {boolean} refuseResources  every RFC 8707 resource is refused with invalid_target
 * @property {number | undefined} deviceInterval  the `interval` of device authorization responses (RFC 8628 §3.2),
 *   seconds; undefined = none (clients then poll every 5 s). Default 1, so tests approve quickly.
 * @property {number | undefined} deviceCodeTtl  seconds a device code lives; undefined = 600
 * @property {number | undefined} deviceExpiresIn  the `expires_in` device authorization responses tell the client,
 *   seconds; undefined = the code's real lifetime (set it above deviceCodeTtl for a server whose clock runs out first)
 * @property {'invalid_grant' | 'expired_token'} deviceExpiredAnswer  what a poll with an expired device code is
 *   answered: oidc-provider's invalid_grant (it forgets the code), or expired_token (servers that keep it)
 * @property {number} deviceSlowDown  answer this many device-code polls that would be authorization_pending with
 *   slow_down instead (oidc-provider never says slow_down; RFC 8628 §3.5 has servers say it)
 * @property {number} apiLatencyMs  every API request (/api/…, not the OAuth endpoints) is answered this much later
 * @property {{ perSecond: number, retryAfterSeconds: number } | null} apiThrottle  more than `perSecond` API requests
 *   in one second are answered 429 with Retry-After, and the server counts a pause (stats key "throttled") from then
 *   for that long; a request that arrives inside a pause is answered 429 too (and counted as "during-pause")
 * @property {'off' | 'required' | 'always-new'} dpopNonce  DPoP nonces (option dpop): see index.d.mts
 * @property {number} dpopClockOffset  seconds the API's clock is ahead when it checks a DPoP proof's iat
 */

/**
 * @typedef {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean | Promise<boolean>} OverrideHandler
 * @typedef {'ok' | 'no-access-token' | 'token-type-mac' | 'negative-expires-in' | 'string-expires-in' | 'no-expires-in' | 'control-char-access-token' | 'huge-expires-in' | 'no-token-type'} TokenResponseKnob
 */

/** @returns {Knobs} */
function defaultKnobs(/** @type {number} */ accessTokenTtl) {
  return {
    accessTokenTtl,
    refreshTokenTtl: undefined,
    strictRedirectPort: false,
    grantScopes: null,
    metadata: 'ok',
    metadataOverrides: null,
    protectedResourceMetadata: 'ok',
    metadataAddress: 'ok',
    postOnlyMcp: false,
    codeChallengeMethods: undefined,
    issParameterSupported: true,
    registration: 'ok',
    tokenResponseScope: 'granted',
    tokenResponse: 'ok',
    clientIdMetadataDocuments: false,
    clientIdMetadataDocumentsOverHttp: false,
    unknownClients: [],
    unknownClientsAt: 'everywhere',
    offlineAccess: false,
    revokeUnknownToken: 'ok',
    extraResources: [],
    refuseResources: false,
    deviceInterval: 1,
    deviceCodeTtl: undefined,
    deviceExpiresIn: undefined,
    deviceExpiredAnswer: 'invalid_grant',
    deviceSlowDown: 0,
    rotateRefreshTokens: true,
    apiLatencyMs: 0,
    apiThrottle: null,
    dpopNonce: 'off',
    dpopClockOffset: 0,
  };
}

function createStats() {
  /** @type {Map<string, number>} */
  const counts = new Map();
  /** @type {Array<{ method: string, path: string, key: string, at: number }>} */
  const events = [];
  return {
    events,
    /** @param {string} key */
    count: (key) => counts.get(key) ?? 0,
    keys: () => Object.fromEntries(counts),
    reset() {
      counts.clear();
      events.length = 0;
    },
    /** @param {string} key @param {string} method @param {string} path */
    bump(key, method = '', path = '') {
      counts.set(key, (counts.get(key) ?? 0) + 1);
      events.push({ method, path, key, at: Date.now() });
    },
  };
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
function sendJson(res, status, body, headers = {}) {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} type
 * @param {string} text
 */
function sendText(res, status, type, text) {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * /openapi.json with a strong ETag of its bytes, answering If-None-Match with 304 as a CDN would.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {unknown} document
 */
function sendOpenApi(req, res, document) {
  const text = `${JSON.stringify(document, null, 2)}\n`;
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 22)}"`;
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { etag });
    return res.end();
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), etag });
  res.end(text);
}

/** @param {import('node:http').IncomingMessage} req */
async function readJsonQuietly(req) {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) return {};
  }
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/**
 * @param {{ port?: number, host?: '127.0.0.1', accessTokenTtl?: number, refreshTokenTtl?: number, clients?: object[], tls?: { key: string, cert: string }, confidentialAuthMethod?: 'client_secret_post' | 'client_secret_basic' }} [options]
 *   tls: serve https with this key and certificate (for 127.0.0.1); baseUrl and issuer are then https://127.0.0.1:<port>
 */
export async function startPlatform(options = {}) {
  const knobs = defaultKnobs(options.accessTokenTtl ?? 3600);
  const stats = createStats();
  /** @type {Set<string>} */
  const secretValues = new Set();
  /** @type {Set<string>} */
  const usedRefreshTokens = new Set();
  // oidc-provider's memory adapter forgets a token once it expires; remembering when each access token was due
  // to expire lets the API say "expired" rather than "invalid" as a real resource server with introspection would.
  /** @type {Map<string, number>} */
  const accessTokenExpiry = new Map();
  // Which kind of token each issued value is, so a revocation can be recorded by what it really revoked.
  /** @type {Map<string, 'access_token' | 'refresh_token'>} */
  const issuedKinds = new Map();
  /** @type {Array<[string, OverrideHandler]>} */
  let overrides = [];
  /** @type {Array<{ clientId: string, scope: string, resource: string | null }>} */
  const authorizations = [];
  /** @type {Array<{ jti: string, htm: string, htu: string, jkt: string, nonce?: string }>} */
  const dpopProofs = [];

  /** @param {unknown} value */
  const remember = (value) => {
    if (typeof value === 'string' && value) secretValues.add(value);
  };

  const server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }) : createServer();
  server.keepAliveTimeout = 5_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('platform server has no TCP address');
  const baseUrl = `${options.tls ? 'https' : 'http'}://127.0.0.1:${address.port}`;
  const issuer = baseUrl;

  let provider;
  let errors;
  let confidentialClientSecret;
  try {
    ({ provider, errors, confidentialClientSecret } = await createProvider({
      issuer,
      knobs,
      refreshTokenTtl: options.refreshTokenTtl ?? 14 * 24 * 3600,
      extraClients: options.clients ?? [],
      confidentialAuthMethod: options.confidentialAuthMethod,
      dpop: options.dpop === true,
    }));
  } catch (err) {
    server.close();
    throw err;
  }
  remember(confidentialClientSecret);

  // RFC 8252 §7.3 port-agnostic loopback matching is oidc-provider's behaviour for native clients; the knob
  // restores exact matching so tests can see what a strict server does.
  const { Client } = provider;
  const portAgnostic = Client.prototype.redirectUriAllowed;
  Client.prototype.redirectUriAllowed = function redirectUriAllowed(/** @type {string} */ value) {
    return knobs.strictRedirectPort ? this.redirectUris.includes(value) : portAgnostic.call(this, value);
  };

  // Every client lookup goes through Client.find: this is where forgotten clients disappear (knobs.unknownClients)
  // and where http://127.0.0.1 client ID metadata documents are resolved for tests. oidc-provider itself only
  // accepts https client_id URLs and refuses to fetch from loopback addresses (SSRF protection), as it should.
  const findClient = Client.find;
  Client.find = async function find(/** @type {unknown} */ id) {
    if (typeof id === 'string' && knobs.unknownClients.includes(id)) {
      if (knobs.unknownClientsAt === 'everywhere' || requestPath.getStore() === '/api/oauth/token') return undefined;
    }
    if (typeof id === 'string' && knobs.clientIdMetadataDocuments && knobs.clientIdMetadataDocumentsOverHttp && isLoopbackHttpUrl(id)) {
      return loopbackMetadataDocumentClient(Client, errors, id);
    }
    return findClient.call(this, id);
  };

  // Observes oidc-provider's parsed requests and responses: statistics, secrets, refresh-token replays and the
  // metadata knobs. Runs around every provider route (provider.use puts it before the router).
  provider.use(async (ctx, next) => {
    await next();
    const oidc = ctx.oidc;
    if (!oidc) return;
    const body = /** @type {Record<string, unknown>} */ (oidc.body ?? {});
    const response = ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body) ? /** @type {Record<string, unknown>} */ (ctx.body) : {};
    if (oidc.route === 'authorization' && oidc.params) {
      const params = /** @type {Record<string, unknown>} */ (oidc.params);
      authorizations.push({ clientId: String(params.client_id ?? ''), scope: String(params.scope ?? ''), resource: params.resource === undefined ? null : String(params.resource) });
    }

    switch (oidc.route) {
      case 'token': {
        if (ctx.status === 200 && knobs.tokenResponseScope === 'omitted') delete response.scope;
        const grantType = typeof body.grant_type === 'string' ? body.grant_type : 'unknown';
        stats.bump(`token:${grantType}`, ctx.method, ctx.path);
        for (const key of ['code', 'code_verifier', 'client_secret', 'refresh_token', 'device_code']) remember(body[key]);
        if (grantType === DEVICE_GRANT && ctx.status === 400 && response.error === 'authorization_pending' && knobs.deviceSlowDown > 0) {
          knobs.deviceSlowDown -= 1;
          response.error = 'slow_down';
          response.error_description = 'you are polling too quickly and should back off at a reasonable rate';
        }
        // oidc-provider forgets an expired device code (invalid_grant); servers that keep it say expired_token.
        if (grantType === DEVICE_GRANT && ctx.status === 400 && response.error === 'invalid_grant' && knobs.deviceExpiredAnswer === 'expired_token') {
          response.error = 'expired_token';
          response.error_description = 'device code is expired';
        }
        if (ctx.status === 200) for (const key of ['access_token', 'refresh_token', 'id_token']) remember(response[key]);
        if (ctx.status === 200) for (const key of /** @type {const} */ (['access_token', 'refresh_token'])) if (typeof response[key] === 'string') issuedKinds.set(response[key], key);
        if (ctx.status === 200 && grantType === 'refresh_token' && !knobs.rotateRefreshTokens) delete response.refresh_token;
        if (ctx.status === 200 && typeof response.access_token === 'string' && typeof response.expires_in === 'number') {
          accessTokenExpiry.set(response.access_token, Date.now() + response.expires_in * 1000);
        }
        if (ctx.status === 200) applyTokenResponseKnob(response, knobs.tokenResponse);
        if (grantType === 'refresh_token' && typeof body.refresh_token === 'string') {
          if (usedRefreshTokens.has(body.refresh_token)) stats.bump('refresh-replay', ctx.method, ctx.path);
          if (ctx.status === 200) usedRefreshTokens.add(body.refresh_token);
        }
        break;
      }
      case 'device_authorization':
        remember(response.device_code);
        if (ctx.status === 200 && knobs.deviceInterval !== undefined) response.interval = knobs.deviceInterval;
        if (ctx.status === 200 && knobs.deviceExpiresIn !== undefined) response.expires_in = knobs.deviceExpiresIn;
        break;
      case 'revocation':
        // "revoke:access_token" / "revoke:refresh_token" / "revoke:unknown": what the request really carried.
        stats.bump(`revoke:${(typeof body.token === 'string' && issuedKinds.get(body.token)) || 'unknown'}`, ctx.method, ctx.path);
        remember(body.token);
        remember(body.client_secret);
        // oidc-provider answers 200 for a token it does not know (RFC 7009 §2.2); some servers answer 400.
        if (knobs.revokeUnknownToken === 'error-400' && ctx.status === 200 && !oidc.entities?.AccessToken && !oidc.entities?.RefreshToken) {
          ctx.status = 400;
          ctx.body = { error: 'invalid_request', error_description: 'the token is unknown or was already revoked' };
        }
        break;
      case 'registration':
        remember(response.client_secret);
        remember(response.registration_access_token);
        break;
      case 'discovery':
        if (ctx.status === 200) applyMetadataKnobs(ctx, knobs);
        break;
      default: {
        const location = ctx.response.get('location');
        if (location) remember(URL.parse(location)?.searchParams.get('code'));
      }
    }
  });

  const providerCallback = provider.callback();
  const lists = createListKnobs();
  const handleApi = createApi({
    provider,
    baseUrl,
    expiryOf: (token) => accessTokenExpiry.get(token),
    listKnobs: lists,
    knobs,
    dpopProofs,
  });

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  /** The throttle's state: the current one-second window and the pause the last 429 asked for. */
  const throttle = { windowStart: 0, inWindow: 0, pausedUntil: 0 };
  /** @param {{ perSecond: number, retryAfterSeconds: number }} limit @returns {boolean} true = answer 429 */
  function throttled(limit) {
    const now = Date.now();
    if (now < throttle.pausedUntil) {
      stats.bump('during-pause');
      return true;
    }
    if (now - throttle.windowStart >= 1000) {
      throttle.windowStart = now;
      throttle.inWindow = 0;
    }
    throttle.inWindow++;
    if (throttle.inWindow <= limit.perSecond) return false;
    throttle.pausedUntil = now + limit.retryAfterSeconds * 1000;
    stats.bump('throttled');
    return true;
  }

  async function route(req, res) {
    const url = new URL(req.url ?? '/', baseUrl);
    const { pathname } = url;
    const method = req.method ?? 'GET';
    stats.bump(`${method} ${pathname}`, method, pathname);
    if (method === 'POST' && pathname === '/api/oauth/register') stats.bump('register', method, pathname);

    if (pathname.startsWith('/api/') && !pathname.startsWith('/api/oauth/')) {
      if (knobs.apiThrottle && throttled(knobs.apiThrottle)) {
        req.resume();
        return sendJson(res, 429, { error: 'rate_limited' }, { 'retry-after': String(knobs.apiThrottle.retryAfterSeconds) });
      }
      if (knobs.apiLatencyMs > 0) await new Promise((resolve) => setTimeout(resolve, knobs.apiLatencyMs));
    }

    for (const [prefix, handler] of [...overrides].reverse()) {
      if (pathname.startsWith(prefix) && (await handler(req, res))) return;
    }

    if (knobs.metadataAddress === 'slash-only' && pathname.startsWith('/.well-known/')) {
      if (pathname === '/.well-known/openid-configuration') return sendJson(res, 301, {}, { location: `${pathname}/${url.search}` });
      if (pathname !== '/.well-known/openid-configuration/') return sendJson(res, 404, { error: 'not_found' });
      req.url = `/.well-known/openid-configuration${url.search}`;
      return providerCallback(req, res);
    }
    if (knobs.postOnlyMcp && (await postOnlyMcp(req, res, pathname))) return;

    switch (pathname) {
      case '/.well-known/oauth-protected-resource':
        if (knobs.protectedResourceMetadata === 'missing') return sendJson(res, 404, { error: 'not_found' });
        // RFC 9728 §2: the API says it checks DPoP proofs, with the algorithms its checker takes (api.mjs).
        return sendJson(res, 200, { ...protectedResourceMetadata(baseUrl, issuer), ...(options.dpop ? { dpop_signing_alg_values_supported: ['ES256', 'ES384', 'EdDSA', 'PS256', 'RS256'] } : {}) });
      case '/.well-known/oauth-authorization-server':
        // RFC 8414 metadata is the same document as OIDC discovery; let oidc-provider produce it.
        req.url = `/.well-known/openid-configuration${url.search}`;
        return providerCallback(req, res);
      case '/openapi.json':
        return sendOpenApi(req, res, openApiDocument(baseUrl));
      case '/auth.md':
        return sendText(res, 200, 'text/markdown; charset=utf-8', authMarkdown(baseUrl));
      case '/api/oauth/register':
        if (method === 'POST' && knobs.registration !== 'ok') return registrationFault(req, res);
        break;
      default:
    }

    if (await handleInteraction(provider, knobs, req, res, url)) return;
    if (await handleApi(req, res, url)) return;
    return providerCallback(req, res);
  }

  /**
   * The POST-only MCP endpoint (knobs.postOnlyMcp): true when it answered.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {string} pathname
   */
  async function postOnlyMcp(req, res, pathname) {
    const resource = `${baseUrl}/mcp`;
    if (pathname === '/mcp-resource.json') {
      sendJson(res, 200, { ...protectedResourceMetadata(baseUrl, issuer), resource });
      return true;
    }
    if (pathname !== '/mcp' && pathname !== '/mcp/') return false;
    req.resume();
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'POST' });
      return true;
    }
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const known = token ? await provider.AccessToken.find(token).catch(() => undefined) : undefined;
    if (!known) {
      sendJson(res, 401, { error: 'unauthorized' }, { 'www-authenticate': `Bearer resource_metadata="${baseUrl}/mcp-resource.json"` });
      return true;
    }
    sendJson(res, 200, { jsonrpc: '2.0', id: 1, result: { user: known.accountId } });
    return true;
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  async function registrationFault(req, res) {
    const requested = await readJsonQuietly(req);
    switch (knobs.registration) {
      case 'error-500':
        return sendJson(res, 500, { error: 'server_error', error_description: 'registration is temporarily unavailable' });
      case 'error-400-oauth':
        return sendJson(res, 400, { error: 'invalid_client_metadata', error_description: 'client registration rejected by policy' });
      case 'error-400-plain':
        return sendText(res, 400, 'text/plain; charset=utf-8', 'Bad Request\n');
      case 'no-client-id': {
        const { client_id: _dropped, ...echoed } = requested;
        return sendJson(res, 201, { ...echoed, client_id_issued_at: Math.floor(Date.now() / 1000) });
      }
      default:
        return sendJson(res, 500, { error: 'server_error', error_description: `unknown registration knob ${knobs.registration}` });
    }
  }

  server.on('request', (req, res) => {
    const pathname = URL.parse(req.url ?? '/', baseUrl)?.pathname ?? '/';
    requestPath.run(pathname, () => route(req, res)).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, { error: 'server_error', error_description: String(err?.message ?? err) });
      else res.destroy();
    });
  });

  let closing;
  return {
    baseUrl,
    issuer,
    knobs,
    lists,
    stats: { count: stats.count, keys: stats.keys, reset: stats.reset, events: stats.events },
    authorizations,
    dpopProofs,
    apiRoutePaths: handleApi.routePaths,
    secrets: () => [...secretValues],
    /** @param {string} pathPrefix @param {OverrideHandler} handler */
    override(pathPrefix, handler) {
      overrides.push([pathPrefix, handler]);
    },
    clearOverrides() {
      overrides = [];
    },
    reset() {
      Object.assign(knobs, defaultKnobs(options.accessTokenTtl ?? 3600));
      lists.reset();
      overrides = [];
      stats.reset();
      dpopProofs.length = 0;
      Object.assign(throttle, { windowStart: 0, inWindow: 0, pausedUntil: 0 });
    },
    /** @param {string} authorizeUrl @param {{ deny?: boolean }} [opts] */
    async approve(authorizeUrl, opts = {}) {
      const callback = await driveConsent(authorizeUrl, { ...opts, ca: options.tls?.cert });
      remember(URL.parse(callback)?.searchParams.get('code'));
      return callback;
    },
    /** @param {string} verificationUrl @param {{ deny?: boolean, userCode?: string }} [opts] */
    approveDevice(verificationUrl, opts = {}) {
      return driveDeviceConsent(verificationUrl, { ...opts, ca: options.tls?.cert });
    },
    close() {
      closing ??= new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      });
      return closing;
    },
    /** @param {string} clientId */
    async registeredClient(clientId) {
      const client = await provider.Client.find(clientId);
      return client ? client.metadata() : undefined;
    },
    preRegistered: {
      publicClientId: PUBLIC_CLIENT_ID,
      confidentialClientId: CONFIDENTIAL_CLIENT_ID,
      confidentialClientSecret: /** @type {string} */ (confidentialClientSecret),
    },
  };
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The path of the request being handled, for knobs that depend on the endpoint (oidc-provider's lookups do not say). */
const requestPath = new AsyncLocalStorage();

/** @param {string} id */
function isLoopbackHttpUrl(id) {
  const url = URL.parse(id);
  return url !== null && url.protocol === 'http:' && url.hostname === '127.0.0.1' && !url.username && !url.password && !url.hash;
}

/**
 * Resolves an http://127.0.0.1 client_id by fetching its metadata document, with the same rules oidc-provider
 * applies to https ones: HTTP 200 JSON object, client_id equal to the URL, no shared-secret authentication.
 * @param {any} Client  oidc-provider's Client model
 * @param {any} errors  oidc-provider's error classes
 * @param {string} id
 */
async function loopbackMetadataDocumentClient(Client, errors, id) {
  let properties;
  try {
    const response = await fetch(id, { redirect: 'manual', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(2500) });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`unexpected response status ${response.status}`);
    }
    properties = await response.json();
  } catch (cause) {
    throw new errors.InvalidClient('client_id metadata document fetch failed', String(/** @type {Error} */ (cause)?.message ?? cause));
  }
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new errors.InvalidClientMetadata('client_id metadata document is not a JSON object');
  }
  if (properties.client_id !== id) {
    throw new errors.InvalidClientMetadata('client_id metadata document client_id does not match the expected value');
  }
  if (['client_secret_basic', 'client_secret_post', 'client_secret_jwt'].includes(properties.token_endpoint_auth_method) || 'client_secret' in properties) {
    throw new errors.InvalidClientMetadata('client_id metadata document must not use shared-secret token endpoint authentication methods');
  }
  const client = new Client(properties, undefined, { cimd: true });
  Object.defineProperty(client, 'clientIdMetadataDocument', { value: true });
  return client;
}

/**
 * Applies the metadata knobs to oidc-provider's discovery response (used for both well-known documents).
 * @param {any} ctx  koa context of oidc-provider
 * @param {Knobs} knobs
 */
function applyMetadataKnobs(ctx, knobs) {
  const doc = /** @type {Record<string, unknown>} */ ({ ...ctx.body });
  if (knobs.codeChallengeMethods === null) delete doc.code_challenge_methods_supported;
  else if (Array.isArray(knobs.codeChallengeMethods)) doc.code_challenge_methods_supported = [...knobs.codeChallengeMethods];
  doc.authorization_response_iss_parameter_supported = knobs.issParameterSupported;
  if (!knobs.offlineAccess && Array.isArray(doc.scopes_supported)) doc.scopes_supported = doc.scopes_supported.filter((s) => s !== 'offline_access');
  if (knobs.clientIdMetadataDocuments) doc.client_id_metadata_document_supported = true;
  else delete doc.client_id_metadata_document_supported;

  switch (knobs.metadata) {
    case 'html':
      ctx.body = '<!doctype html><html><head><title>Learning Platform</title></head><body><h1>Welcome to the Learning Platform</h1><p>Please sign in.</p></body></html>\n';
      ctx.type = 'html';
      return;
    case 'truncated': {
      const text = JSON.stringify(doc);
      ctx.body = text.slice(0, Math.floor(text.length / 2));
      ctx.type = 'application/json';
      return;
    }
    case 'wrong-issuer':
      doc.issuer = 'https://login.example.test';
      break;
    case 'missing-endpoints':
      delete doc.authorization_endpoint;
      delete doc.token_endpoint;
      break;
    case 'http-endpoint':
      doc.token_endpoint = `http://platform.example.test${new URL(String(doc.token_endpoint)).pathname}`;
      break;
    default:
  }
  for (const [name, value] of Object.entries(knobs.metadataOverrides ?? {})) {
    if (value === null) delete doc[name];
    else doc[name] = value;
  }
  ctx.body = doc;
}

/**
 * Mangles a successful token response the way a broken server would; the tokens were issued (and a refresh token
 * rotated) before this runs, exactly as on a server whose response is wrong.
 * @param {Record<string, unknown>} response
 * @param {TokenResponseKnob} knob
 */
function applyTokenResponseKnob(response, knob) {
  switch (knob) {
    case 'no-access-token':
      delete response.access_token;
      break;
    case 'token-type-mac':
      response.token_type = 'mac';
      break;
    case 'no-token-type':
      // OpenAuth's answer: RFC 6749 §5.1 requires the member, and Go's x/oauth2 reads its absence as Bearer.
      delete response.token_type;
      break;
    case 'negative-expires-in':
      response.expires_in = -3600;
      break;
    case 'string-expires-in':
      response.expires_in = String(response.expires_in);
      break;
    case 'no-expires-in':
      delete response.expires_in;
      break;
    case 'huge-expires-in':
      // 10^13 seconds: a date past what JavaScript's Date can hold.
      response.expires_in = 1e13;
      break;
    case 'control-char-access-token':
      response.access_token = `${response.access_token}\u001b[2J`;
      break;
    default:
  }
}
