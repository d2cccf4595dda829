/**
 * Better Auth (better-auth) with its OAuth 2.1 provider plugin (@better-auth/oauth-provider), set up as their
 * documentation sets it up: the JWT plugin beside oauthProvider (its default), Better Auth's own /token path
 * disabled, email and password sign-in, open dynamic registration (RFC 7591) for public native clients, the
 * authorization server metadata served at the RFC 8414 path-inserted address (the issuer is /api/auth), and a
 * resource server using the plugin's resource client: its RFC 9728 document and access-token verification
 * (JWTs for the API, audience checked).
 *
 * The scopes are API scopes only (courses:read, courses:write): without `openid` the plugin is "just an OAuth
 * server" (its own words): /.well-known/openid-configuration answers 404 and the metadata lists no UserInfo.
 *
 * The login and consent pages are plain server-rendered forms standing in for the documentation's client pages:
 * each carries the signed authorization query (oauth_query) and posts it, with the person's answers, to Better
 * Auth's own endpoints (/sign-in/email, /oauth2/consent), as the oauthProviderClient() browser plugin does.
 *
 * Usage: node server.mjs '<json options>'; prints one JSON line {"port": N, "issuer": "..."} on stdout when it
 * listens. `/_test/state` exposes the server's own records (not part of any protocol).
 * Options: openid (bool, default false): list openid, profile and email too (to see what the plugin does then).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { betterAuth } from 'better-auth';
import { memoryAdapter } from 'better-auth/adapters/memory';
import { getSchema } from 'better-auth/db';
import { toNodeHandler } from 'better-auth/node';
import { jwt } from 'better-auth/plugins';
import { oauthProvider, oauthProviderAuthServerMetadata } from '@better-auth/oauth-provider';
import { oauthProviderResourceClient } from '@better-auth/oauth-provider/resource-client';

const OPTIONS = JSON.parse(process.argv[2] ?? '{}');
const API_SCOPES = ['courses:read', 'courses:write'];
// offline_access: the plugin issues a refresh token only for it (OIDC Core §11's rule, applied without openid too).
const SCOPES = OPTIONS.openid ? ['openid', 'profile', 'email', 'offline_access', ...API_SCOPES] : ['offline_access', ...API_SCOPES];
const USER = { email: 'katherine@example.test', password: 'orbital mechanics', name: 'Katherine Johnson' };
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => ENTITIES[c]);

// The origin must be known before Better Auth is configured (its baseURL is the issuer's origin).
const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const issuer = `${origin}/api/auth`;
const resource = origin; // the API's RFC 8707 identifier, as its RFC 9728 document names it

const options = {
  baseURL: origin,
  secret: randomBytes(32).toString('base64url'), // signs its cookies and authorization queries; new each start
  emailAndPassword: { enabled: true },
  // As the documentation advises: the JWT plugin's own /token (a signed-in session's JWT) is no OAuth endpoint.
  disabledPaths: ['/token'],
  logger: { level: 'error' },
  telemetry: { enabled: false },
  plugins: [
    jwt(),
    oauthProvider({
      loginPage: '/sign-in',
      consentPage: '/consent',
      scopes: SCOPES,
      allowDynamicClientRegistration: true,
      allowUnauthenticatedClientRegistration: true,
      resources: [resource],
      clientRegistrationDefaultResources: [resource],
    }),
  ],
};
// The memory adapter needs a table for each model Better Auth and its plugins use.
const db = Object.fromEntries(Object.keys(getSchema(options)).map((model) => [model, []]));
const auth = betterAuth({ ...options, database: memoryAdapter(db) });
const resourceClient = oauthProviderResourceClient(auth).getActions();
await auth.api.signUpEmail({ body: USER });

const authHandler = toNodeHandler(auth);
const serveMetadata = oauthProviderAuthServerMetadata(auth);

/** Better Auth's answer to a request made on the person's behalf (their cookies), as a fetch Response. */
async function callAuth(req, path, body) {
  return auth.handler(
    new Request(`${issuer}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: req.headers.cookie ?? '', origin },
      body: JSON.stringify(body),
    }),
  );
}

async function readForm(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return new URLSearchParams(text);
}

function page(res, title, body) {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><title>${escape(title)}</title><h1>${escape(title)}</h1>${body}`);
}

/** Follows Better Auth's answer: a redirect (or the JSON naming one) goes to the browser, with any cookies. */
async function relay(res, answer) {
  const headers = {};
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  let location = answer.headers.get('location');
  if (!location && answer.headers.get('content-type')?.includes('json')) {
    const json = await answer.clone().json();
    location = json.url ?? json.redirect_uri;
  }
  if (location) {
    res.writeHead(302, { ...headers, location: new URL(location, origin).href });
    return res.end();
  }
  res.writeHead(answer.status, { ...headers, 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
  res.end(await answer.text());
}

/**
 * The resource server's check, the way the plugin's resource client asks new integrations to make it: the whole
 * request (verifyAccessTokenRequest), so that a DPoP-bound token (the plugin lists dpop_signing_alg_values_supported
 * by default) is taken only as `DPoP` with a proof from its key (method, URL, ath, cnf.jkt), and a bearer one as
 * `Bearer`.
 */
async function verifiedAccess(req, url) {
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    return await resourceClient.verifyAccessTokenRequest(new Request(url, { method: req.method, headers }), {
      verifyOptions: { audience: resource, issuer },
      jwksUrl: `${issuer}/jwks`,
      requiredScopes: ['courses:read'],
    });
  } catch (error) {
    return { error };
  }
}

server.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, origin);
    if (url.pathname === '/.well-known/oauth-authorization-server/api/auth') {
      const answer = await serveMetadata(new Request(url));
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      return res.end(await answer.text());
    }
    if (url.pathname === '/.well-known/oauth-protected-resource') {
      const metadata = await resourceClient.getProtectedResourceMetadata({ resource, authorization_servers: [issuer], scopes_supported: API_SCOPES });
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(metadata));
    }
    if (url.pathname === '/sign-in' && req.method === 'GET') {
      return page(res, 'Sign in', `<form method="post" action="/sign-in">
<input type="hidden" name="oauth_query" value="${escape(url.search.slice(1))}">
<label>Email <input name="email"></label> <label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button></form>`);
    }
    if (url.pathname === '/sign-in' && req.method === 'POST') {
      const form = await readForm(req);
      return relay(res, await callAuth(req, '/sign-in/email', { email: form.get('email'), password: form.get('password'), oauth_query: form.get('oauth_query') }));
    }
    if (url.pathname === '/consent' && req.method === 'GET') {
      return page(res, `${url.searchParams.get('client_id')} asks for: ${url.searchParams.get('scope') ?? '(none)'}`, `<form method="post" action="/consent">
<input type="hidden" name="oauth_query" value="${escape(url.search.slice(1))}">
<button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny">Deny</button></form>`);
    }
    if (url.pathname === '/consent' && req.method === 'POST') {
      const form = await readForm(req);
      return relay(res, await callAuth(req, '/oauth2/consent', { accept: form.get('decision') === 'approve', oauth_query: form.get('oauth_query') }));
    }
    if (url.pathname === '/v1/courses' && req.method === 'GET') {
      const access = await verifiedAccess(req, url);
      if (access.error) {
        res.writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="invalid_token", resource_metadata="${origin}/.well-known/oauth-protected-resource"`,
        });
        return res.end(JSON.stringify({ error: 'invalid_token', error_description: access.error.message }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ items: [{ id: 'c1', title: 'Orbital mechanics' }], user: access.sub }));
    }
    if (url.pathname === '/_test/state') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ issuer, resource, ...(await records(['user', 'session', 'oauthClient', 'oauthAccessToken', 'oauthRefreshToken', 'oauthConsent'])) }));
    }
    if (url.pathname.startsWith('/api/auth/')) return authHandler(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not found');
  } catch (error) {
    process.stderr.write(`${error.stack}\n`);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('Internal error');
  }
});

/** The server's records, read through Better Auth's own adapter (as its endpoints read them). */
async function records(models) {
  const { adapter } = await auth.$context;
  return Object.fromEntries(await Promise.all(models.map(async (model) => [model, await adapter.findMany({ model })])));
}

// The test holds stdin open: its end means the test runner is gone, so stop too.
process.stdin.on('end', () => process.exit(0)).resume();
process.stdout.write(`${JSON.stringify({ port: server.address().port, issuer })}\n`);
