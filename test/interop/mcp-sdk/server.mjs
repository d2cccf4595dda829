/**
 * A plain OAuth 2.1 authorization server built with the MCP TypeScript SDK (@modelcontextprotocol/sdk), set up the
 * way the SDK's documentation and its demo in-memory provider set one up: `mcpAuthRouter` on an origin of its own
 * (the issuer), an `OAuthServerProvider` written here, and a resource server on another origin with the SDK's
 * metadata router (RFC 9728) and bearer middleware. It issues no ID tokens and lists no `openid`: it is not an
 * OpenID Provider, as most MCP servers' authorization servers are not.
 *
 * What the provider does (the SDK leaves it to the provider): a consent page the person approves with a user name
 * and password; codes bound to client, redirect URI and resource; refresh tokens rotated on each use; revocation of
 * either token (a refresh token takes its access token with it). The SDK itself does dynamic registration, PKCE
 * (S256 only) and client authentication.
 *
 * What the SDK publishes about itself, and does: `revocation_endpoint_auth_methods_supported` lists only
 * client_secret_post, yet its revocation endpoint revokes a public client's tokens given only client_id.
 *
 * Usage: node server.mjs '<json options>'; prints one JSON line {"port": API port, "issuer": "..."} on stdout when
 * both origins listen. `/_test/state` on the API origin exposes the server's records (not part of any protocol).
 * Options: resourcePath (default "/"): the API under a path, as MCP servers are (`/mcp`): its RFC 9728 document is
 * then at the path-suffixed address (/.well-known/oauth-protected-resource/mcp) and none at the origin's.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter, createOAuthMetadata } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidScopeError, InvalidTargetError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const OPTIONS = JSON.parse(process.argv[2] ?? '{}');
const SCOPES = ['courses:read', 'courses:write'];
const USER = { id: 'user-ada', username: 'ada', password: 'analytical engine', name: 'Ada Lovelace' };
const ACCESS_TTL = 3600;

const clients = new Map(); // client_id -> the registration as the SDK stored it
const pending = new Map(); // consent request id -> { client, params }
const codes = new Map(); // code -> { clientId, params, user }
const tokens = []; // every token pair issued, with its revocation state

const secret = () => randomBytes(32).toString('base64url');
const same = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => ENTITIES[c]);

/** The SDK's clients store interface: it generates client_id (and a secret for non-public clients) itself. */
const clientsStore = {
  async getClient(clientId) {
    return clients.get(clientId);
  },
  async registerClient(client) {
    clients.set(client.client_id, client);
    return client;
  },
};

function issue(clientId, scopes, resource, user) {
  const record = {
    client_id: clientId,
    access_token: secret(),
    refresh_token: secret(),
    scope: scopes.join(' '),
    resource: resource?.href,
    user: user.id,
    expires_at: Math.floor(Date.now() / 1000) + ACCESS_TTL,
    access_revoked: false,
    refresh_revoked: false,
  };
  tokens.push(record);
  return {
    access_token: record.access_token,
    token_type: 'Bearer',
    expires_in: ACCESS_TTL,
    refresh_token: record.refresh_token,
    scope: record.scope,
  };
}

/** RFC 8707: a token request may narrow the resource the code was issued for, never widen or change it. */
function checkResource(bound, asked) {
  if (asked && bound && asked.href !== bound.href) throw new InvalidTargetError(`This grant was issued for ${bound.href}`);
}

const provider = {
  clientsStore,

  /** Renders the consent page; the code is issued only when the person approves it (POST /consent). */
  async authorize(client, params, res) {
    const unknown = (params.scopes ?? []).filter((s) => !SCOPES.includes(s));
    if (unknown.length > 0) throw new InvalidScopeError(`Unknown scope: ${unknown.join(' ')}`);
    const id = randomUUID();
    pending.set(id, { client, params });
    const scopes = params.scopes?.length ? params.scopes.join(', ') : '(none)';
    res.type('html').send(`<!doctype html><title>Authorize ${escape(client.client_name ?? client.client_id)}</title>
<h1>${escape(client.client_name ?? client.client_id)} asks for: ${escape(scopes)}</h1>
<form method="post" action="/consent">
<input type="hidden" name="request" value="${id}">
<label>User name <input name="username"></label> <label>Password <input type="password" name="password"></label>
<button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny">Deny</button>
</form>`);
  },

  async challengeForAuthorizationCode(client, code) {
    const grant = codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('Unknown authorization code');
    return grant.params.codeChallenge;
  },

  async exchangeAuthorizationCode(client, code, _verifier, redirectUri, resource) {
    const grant = codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('Unknown authorization code');
    codes.delete(code); // one use (RFC 6749 §4.1.2)
    // RFC 6749 §4.1.3: the redirect URI of the authorization request, if one was sent there.
    if (redirectUri !== grant.params.redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
    checkResource(grant.params.resource, resource);
    return issue(client.client_id, grant.params.scopes ?? [], resource ?? grant.params.resource, grant.user);
  },

  /** Rotation: each refresh token is spent by its use; the new pair keeps the grant's scope and resource. */
  async exchangeRefreshToken(client, refreshToken, scopes, resource) {
    const record = tokens.find((t) => t.refresh_token === refreshToken);
    if (!record || record.refresh_revoked || record.client_id !== client.client_id) throw new InvalidGrantError('Invalid refresh token');
    const granted = record.scope.split(' ').filter(Boolean);
    if (scopes && scopes.some((s) => !granted.includes(s))) throw new InvalidScopeError('More scope than the grant holds');
    const bound = record.resource ? new URL(record.resource) : undefined;
    checkResource(bound, resource);
    record.refresh_revoked = true;
    return issue(client.client_id, scopes ?? granted, resource ?? bound, { id: record.user });
  },

  async verifyAccessToken(token) {
    const record = tokens.find((t) => t.access_token === token);
    if (!record || record.access_revoked) throw new InvalidTokenError('Invalid or revoked token');
    return {
      token,
      clientId: record.client_id,
      scopes: record.scope.split(' ').filter(Boolean),
      expiresAt: record.expires_at,
      resource: record.resource ? new URL(record.resource) : undefined,
      extra: { user: record.user },
    };
  },

  /** RFC 7009: either token; a refresh token takes the access token issued with it. Unknown tokens: nothing. */
  async revokeToken(client, { token }) {
    for (const record of tokens) {
      if (record.client_id !== client.client_id) continue;
      if (record.refresh_token === token) {
        record.refresh_revoked = true;
        record.access_revoked = true;
      } else if (record.access_token === token) {
        record.access_revoked = true;
      }
    }
  },
};

function listen(app) {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// The authorization server's origin: its issuer is the origin itself (the SDK serves RFC 8414 metadata only at the
// root), so it is started first and the API is told where it is.
const authApp = express();
const authServer = await listen(authApp);
const issuerUrl = new URL(`http://127.0.0.1:${authServer.address().port}/`);

const apiApp = express();
const apiServer = await listen(apiApp);
const apiUrl = new URL(OPTIONS.resourcePath ?? '/', `http://127.0.0.1:${apiServer.address().port}`);
const apiPath = apiUrl.pathname.replace(/\/$/, '');
const wellKnownRequests = []; // which metadata addresses a client asked the API's origin for
apiApp.use('/.well-known', (req, _res, next) => {
  wellKnownRequests.push(req.originalUrl);
  next();
});

authApp.use(mcpAuthRouter({ provider, issuerUrl, scopesSupported: SCOPES, resourceName: 'Courses API (MCP SDK interop)' }));
authApp.post('/consent', express.urlencoded({ extended: false }), (req, res) => {
  const request = pending.get(req.body.request);
  if (!request) return res.status(400).type('text').send('Unknown or finished consent request');
  pending.delete(req.body.request);
  const back = new URL(request.params.redirectUri);
  if (request.params.state !== undefined) back.searchParams.set('state', request.params.state);
  const signedIn = req.body.username === USER.username && same(String(req.body.password ?? ''), USER.password);
  if (req.body.decision !== 'approve' || !signedIn) {
    back.searchParams.set('error', 'access_denied');
  } else {
    const code = secret();
    codes.set(code, { clientId: request.client.client_id, params: request.params, user: USER });
    back.searchParams.set('code', code);
  }
  res.redirect(302, back.href);
});

// The resource server: the SDK's RFC 9728 document at the API origin naming the issuer, and its bearer middleware
// (audience checked against this API, the resource_metadata link on every 401/403).
const oauthMetadata = createOAuthMetadata({ provider, issuerUrl, scopesSupported: SCOPES });
apiApp.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: apiUrl, scopesSupported: SCOPES, resourceName: 'Courses API (MCP SDK interop)' }));
const bearer = (scope) =>
  requireBearerAuth({ verifier: provider, requiredScopes: [scope], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(apiUrl), expectedResource: apiUrl });
// Two pages, the second behind a cursor (next_cursor, sent back as ?cursor=): for plat call --paginate.
const COURSES = [
  [{ id: 'c1', title: 'Difference engines' }],
  [{ id: 'c2', title: 'Analytical engines' }],
];
apiApp.get(`${apiPath}/v1/courses`, bearer('courses:read'), (req, res) => {
  const page = req.query.cursor === 'page-2' ? 1 : 0;
  res.json({ items: COURSES[page], user: req.auth.extra.user, ...(page === 0 ? { next_cursor: 'page-2' } : {}) });
});
apiApp.post(`${apiPath}/v1/courses`, bearer('courses:write'), (_req, res) => res.status(201).json({ id: 'c2' }));
apiApp.get('/_test/state', (_req, res) => {
  res.json({
    issuer: issuerUrl.href,
    resource: apiUrl.href,
    wellKnownRequests,
    registrations: [...clients.values()],
    tokens,
  });
});

// The test holds stdin open: its end means the test runner is gone, so stop too.
process.stdin.on('end', () => process.exit(0)).resume();
process.stdout.write(`${JSON.stringify({ port: apiServer.address().port, issuer: issuerUrl.href })}\n`);
