// The reference platform, exercised over real HTTP with oauth4webapi the way plat will talk to it.

import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';

import { usePlatform } from '../helpers/platform.js';

// The spec's scope table (section 5), written out independently of the platform's own copy.
const SPEC_SCOPES = [
  'openid', 'profile', 'email',
  'courses:read', 'courses:write', 'students:read', 'students:write', 'members:read', 'members:write',
  'analytics:read', 'curriculum:read', 'curriculum:write', 'orders:read', 'school:read', 'school:write',
  'appearance:read', 'appearance:write', 'events:read', 'events:write', 'membership_plans:read',
  'membership_plans:write', 'coupons:read', 'coupons:write', 'posts:read', 'posts:write', 'subscriptions:read',
  'subscriptions:write', 'digital_products:read', 'digital_products:write', 'comments:read', 'lecturers:read',
  'lecturers:write', 'storage:write', 'forms:read', 'pages:read', 'pages:write', 'account:read', 'account:write',
];

const insecure = { [oauth.allowInsecureRequests]: true } as const;

const platform = usePlatform();
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  const issuer = new URL(platform.issuer);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
});

async function register(redirectUris: string[], extra: Partial<oauth.OmitSymbolProperties<oauth.Client>> = {}) {
  const response = await oauth.dynamicClientRegistrationRequest(
    as,
    {
      client_name: 'plat test',
      application_type: 'native',
      redirect_uris: redirectUris,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...extra,
    },
    insecure,
  );
  return oauth.processDynamicClientRegistrationResponse(response);
}

interface Login {
  client: oauth.Client;
  clientAuth: oauth.ClientAuth;
  callback: URL;
  tokens: oauth.TokenEndpointResponse;
}

/** Registers (unless a client is given), approves consent over HTTP and exchanges the code. */
async function login(
  scope: string,
  options: { client?: oauth.Client; clientAuth?: oauth.ClientAuth; redirectUri?: string } = {},
): Promise<Login> {
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1:53682/callback';
  const client = options.client ?? (await register(['http://127.0.0.1:40000/callback']));
  const clientAuth = options.clientAuth ?? oauth.None();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  }).toString();

  const callback = new URL(await platform.approve(url.href));
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  return { client, clientAuth, callback, tokens };
}

// Response bodies in these tests are inspected loosely; the platform's own shapes are what is under test.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function json(response: Response): Promise<any> {
  return response.json();
}

function api(path: string, accessToken?: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (accessToken) headers.set('authorization', `Bearer ${accessToken}`);
  return fetch(new URL(path, platform.baseUrl), { ...init, headers });
}

async function refresh(l: Login, refreshToken: string) {
  const response = await oauth.refreshTokenGrantRequest(as, l.client, l.clientAuth, refreshToken, insecure);
  return oauth.processRefreshTokenResponse(as, l.client, response);
}

describe('discovery documents', () => {
  it('serves RFC 9728 protected resource metadata pointing at the issuer', async () => {
    const resource = new URL(platform.baseUrl);
    const metadata = await oauth.processResourceDiscoveryResponse(
      resource,
      await oauth.resourceDiscoveryRequest(resource, insecure),
    );
    expect(metadata.resource).toBe(platform.baseUrl);
    expect(metadata.authorization_servers).toEqual([platform.issuer]);
    expect(metadata.bearer_methods_supported).toEqual(['header']);
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['courses:read', 'analytics:read']));
  });

  it('serves RFC 8414 metadata with the spec paths, PKCE S256, iss, registration, revocation and every scope', () => {
    expect(as.issuer).toBe(platform.issuer);
    expect(as.issuer.endsWith('/')).toBe(false);
    expect(as.authorization_endpoint).toBe(`${platform.baseUrl}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${platform.baseUrl}/api/oauth/token`);
    expect(as.registration_endpoint).toBe(`${platform.baseUrl}/api/oauth/register`);
    expect(as.revocation_endpoint).toBe(`${platform.baseUrl}/api/oauth/revoke`);
    expect(as.userinfo_endpoint).toBe(`${platform.baseUrl}/api/oauth/userinfo`);
    expect(as.jwks_uri).toBe(`${platform.baseUrl}/api/oauth/jwks`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect(as.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect(as.scopes_supported).toEqual(expect.arrayContaining(SPEC_SCOPES));
  });

  it('serves the same document as OpenID Connect discovery, plus /openapi.json and /auth.md', async () => {
    const issuer = new URL(platform.issuer);
    const oidc = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    expect(oidc).toEqual(as);

    const openapi = await json(await api('/openapi.json'));
    expect(openapi.openapi).toMatch(/^3\.1/);
    expect(openapi.paths['/api/courses'].get.security[0]).toEqual({ oauth2: ['courses:read'] });
    expect(openapi.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe(as.token_endpoint);

    const authMd = await api('/auth.md');
    expect(authMd.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(await authMd.text()).toContain('/api/oauth/register');
  });
});

describe('dynamic client registration', () => {
  it('accepts public native clients with loopback redirect URIs', async () => {
    const client = await register([
      'http://127.0.0.1:8080/callback',
      'http://[::1]:8080/callback',
      'http://localhost:8080/callback',
    ]);
    expect(client.client_id).toBeTruthy();
    expect(client.client_secret).toBeUndefined();
    expect(client.token_endpoint_auth_method).toBe('none');

    const minimal = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: ['http://127.0.0.1/cb'] }, insecure),
    );
    expect(minimal.grant_types).toEqual(['authorization_code', 'refresh_token']);
    expect(platform.stats.count('register')).toBeGreaterThanOrEqual(2);
  });

  it('refuses non-loopback redirect URIs with invalid_redirect_uri', async () => {
    for (const uri of ['https://app.example.com/callback', 'http://app.example.com/callback']) {
      const error = await register([uri]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.ResponseBodyError);
      expect(error).toMatchObject({ status: 400, error: 'invalid_redirect_uri' });
    }
  });
});

describe('authorization code flow', () => {
  it('completes with PKCE, returns iss in the callback, and issues usable tokens', async () => {
    const { callback, tokens } = await login('openid profile email courses:read');

    // The registered redirect was on port 40000; the request used 53682: loopback ports are ignored (RFC 8252 §7.3).
    expect(callback.origin).toBe('http://127.0.0.1:53682');
    expect(callback.searchParams.get('iss')).toBe(platform.issuer);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('openid profile email courses:read');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeTruthy();

    const userinfo = await oauth.processUserInfoResponse(
      as,
      { client_id: 'unused' },
      'user-ada',
      await oauth.userInfoRequest(as, { client_id: 'unused' }, tokens.access_token, insecure),
    );
    expect(userinfo).toMatchObject({ sub: 'user-ada', name: 'Ada Lovelace', email: 'ada@example.test', email_verified: true, preferred_username: 'ada' });

    const courses = await api('/api/courses', tokens.access_token);
    expect(courses.status).toBe(200);
    expect(await courses.json()).toMatchObject({ anonymous: false, sub: 'user-ada' });

    for (const secret of [tokens.access_token, tokens.refresh_token!, callback.searchParams.get('code')!]) {
      expect(platform.secrets()).toContain(secret);
    }
  });

  it('works for the pre-registered confidential client with client_secret_post', async () => {
    const { preRegistered } = platform;
    const { tokens } = await login('courses:read', {
      client: { client_id: preRegistered.confidentialClientId, token_endpoint_auth_method: 'client_secret_post' },
      clientAuth: oauth.ClientSecretPost(preRegistered.confidentialClientSecret),
      redirectUri: 'http://127.0.0.1:61000/callback',
    });
    expect(tokens.scope).toBe('courses:read');
    expect(platform.secrets()).toContain(preRegistered.confidentialClientSecret);
  });

  it('sends error=access_denied (with iss) when the user clicks Deny', async () => {
    const client = await register(['http://127.0.0.1/callback']);
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:5000/callback',
      scope: 'openid courses:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
      state: 'deny-state',
    }).toString();
    const callback = new URL(await platform.approve(url.href, { deny: true }));
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('iss')).toBe(platform.issuer);
    const error = (() => {
      try {
        oauth.validateAuthResponse(as, client, callback, 'deny-state');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(oauth.AuthorizationResponseError);
    expect(error).toMatchObject({ error: 'access_denied' });
  });

  it('enforces the loopback port when knobs.strictRedirectPort is set', async () => {
    platform.knobs.strictRedirectPort = true;
    await expect(login('courses:read')).rejects.toThrow(/redirect_uri/);
    const client = await register(['http://127.0.0.1:53682/callback']);
    await expect(login('courses:read', { client })).resolves.toBeTruthy();
  });
});

describe('refresh and revocation', () => {
  it('rotates the refresh token on every use and rejects the old one with invalid_grant', async () => {
    const l = await login('openid courses:read');
    const first = l.tokens.refresh_token!;
    const rotated = await refresh(l, first);
    expect(rotated.refresh_token).toBeTruthy();
    expect(rotated.refresh_token).not.toBe(first);
    expect(rotated.access_token).not.toBe(l.tokens.access_token);
    expect(rotated.scope).toBe('openid courses:read');

    const replays = platform.stats.count('refresh-replay');
    const error = await refresh(l, first).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect(error).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(platform.stats.count('refresh-replay')).toBe(replays + 1);
    expect(platform.stats.count('token:refresh_token')).toBeGreaterThanOrEqual(2);
  });

  it('revokes access tokens (API answers 401 invalid_token with resource_metadata) and refresh tokens', async () => {
    const l = await login('courses:read');
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, l.client, l.clientAuth, l.tokens.access_token, insecure),
    );
    const error = await oauth
      .protectedResourceRequest(l.tokens.access_token, 'GET', new URL('/api/courses', platform.baseUrl), new Headers(), null, insecure)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = (error as oauth.WWWAuthenticateChallengeError).cause[0]!;
    expect((error as oauth.WWWAuthenticateChallengeError).status).toBe(401);
    expect(challenge.scheme).toBe('bearer');
    expect(challenge.parameters).toMatchObject({
      error: 'invalid_token',
      resource_metadata: `${platform.baseUrl}/.well-known/oauth-protected-resource`,
    });

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, l.client, l.clientAuth, l.tokens.refresh_token!, insecure),
    );
    await expect(refresh(l, l.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('expires access tokens after knobs.accessTokenTtl seconds', async () => {
    platform.knobs.accessTokenTtl = 1;
    const { tokens } = await login('courses:read');
    expect(tokens.expires_in).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const response = await api('/api/courses', tokens.access_token);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    expect(await response.json()).toMatchObject({ error: 'invalid_token', error_description: 'access token expired' });
  });
});

describe('protected API', () => {
  it('serves anonymous requests without a token', async () => {
    const response = await api('/api/courses');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.anonymous).toBe(true);
    expect(body.courses.length).toBeGreaterThan(0);
    expect(body.courses.every((c: { public: boolean }) => c.public)).toBe(true);
  });

  it('answers 403 insufficient_scope naming the missing scope', async () => {
    platform.knobs.grantScopes = (requested) => requested.filter((s) => s !== 'students:read');
    const { tokens } = await login('courses:read students:read');
    expect(tokens.scope).toBe('courses:read');

    const response = await api('/api/students', tokens.access_token);
    expect(response.status).toBe(403);
    const header = response.headers.get('www-authenticate') ?? '';
    expect(header).toMatch(/^Bearer /);
    expect(header).toContain('error="insufficient_scope"');
    expect(header).toContain('scope="students:read"');
    expect(header).toContain(`resource_metadata="${platform.baseUrl}/.well-known/oauth-protected-resource"`);
    expect(await response.json()).toMatchObject({ error: 'insufficient_scope' });
  });

  it('echoes requests without ever echoing the token', async () => {
    const { tokens } = await login('courses:write');
    const response = await api('/api/echo?a=1&a=2', tokens.access_token, { method: 'POST', body: 'hello' });
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({
      method: 'POST',
      path: '/api/echo',
      query: { a: ['1', '2'] },
      body: 'hello',
      authenticated: true,
      sub: 'user-ada',
      headers: { authorization: 'Bearer <redacted>' },
    });
    for (const secret of platform.secrets()) expect(text).not.toContain(secret);

    const created = await api('/api/courses', tokens.access_token, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Looms' }),
    });
    expect(created.status).toBe(201);
    expect((await json(created)).course).toMatchObject({ title: 'Looms', id: expect.any(String) });
  });

  it('streams exactly N bytes of pattern data from /api/download', async () => {
    const bytes = 3 * 64 * 1024 + 123;
    const response = await api(`/api/download?bytes=${bytes}`);
    expect(response.headers.get('content-length')).toBe(String(bytes));
    const data = new Uint8Array(await response.arrayBuffer());
    expect(data.length).toBe(bytes);
    expect(data.every((b, i) => b === i % 256)).toBe(true);
  });

  it('produces faults on demand: status codes, redirects and overrides', async () => {
    const limited = await api('/api/status/429?retry_after=7');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toEqual({ status: 429 });

    const redirect = await api('/api/redirect?to=http://127.0.0.1:1/elsewhere', undefined, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('http://127.0.0.1:1/elsewhere');

    platform.override('/api/oauth/token', (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
      return true;
    });
    const token = await fetch(as.token_endpoint!, { method: 'POST' });
    expect(token.status).toBe(503);
  });
});

describe('knobs', () => {
  it('metadata: "html" serves an HTML page that oauth4webapi rejects', async () => {
    platform.knobs.metadata = 'html';
    const issuer = new URL(platform.issuer);
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    await expect(oauth.processDiscoveryResponse(issuer, response)).rejects.toThrow();
  });

  it('codeChallengeMethods and issParameterSupported change what is advertised', async () => {
    platform.knobs.codeChallengeMethods = null;
    platform.knobs.issParameterSupported = false;
    let doc = await json(await api('/.well-known/oauth-authorization-server'));
    expect(doc).not.toHaveProperty('code_challenge_methods_supported');
    expect(doc.authorization_response_iss_parameter_supported).toBe(false);

    platform.knobs.codeChallengeMethods = ['plain'];
    doc = await json(await api('/.well-known/openid-configuration'));
    expect(doc.code_challenge_methods_supported).toEqual(['plain']);
  });

  it('registration faults and missing protected resource metadata', async () => {
    platform.knobs.registration = 'error-400-plain';
    const plain = await fetch(as.registration_endpoint!, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(plain.status).toBe(400);
    expect(await plain.text()).toBe('Bad Request\n');

    platform.knobs.registration = 'no-client-id';
    await expect(register(['http://127.0.0.1/cb'])).rejects.toThrow(/client_id/);

    platform.knobs.protectedResourceMetadata = 'missing';
    expect((await api('/.well-known/oauth-protected-resource')).status).toBe(404);
  });
});
