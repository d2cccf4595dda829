import type * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { ExitCode, PlatError } from '../../../src/errors.js';
import type { Fetch } from '../../../src/http/index.js';
import { discover } from '../../../src/oauth/discovery.js';
import { MAX_OAUTH_BODY_BYTES, SPEC_PATHS, assertS256, assertSecureEndpoint } from '../../../src/oauth/endpoints.js';

const BASE = 'https://api.example';
const NOW = 1_700_000_000_000;

type Route = () => Response;
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A fetch that answers from a table of URLs (404 for anything else) and records what was asked. */
function fakeFetch(routes: Record<string, Route>) {
  const calls: Array<{ url: string; init?: RequestInit & { maxBodyBytes?: number } }> = [];
  const fetch: Fetch = async (input, init) => {
    const url = String(input);
    calls.push({ url, init });
    const route = routes[url];
    return route ? route() : new Response('not found', { status: 404 });
  };
  return { deps: { fetch }, calls, urls: () => calls.map((c) => c.url) };
}

function fullMetadata(issuer: string, extra: Record<string, unknown> = {}) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/api/oauth/token`,
    registration_endpoint: `${issuer}/api/oauth/register`,
    userinfo_endpoint: `${issuer}/api/oauth/userinfo`,
    revocation_endpoint: `${issuer}/api/oauth/revoke`,
    code_challenge_methods_supported: ['S256'],
    ...extra,
  };
}

async function rejection(promise: Promise<unknown>): Promise<PlatError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatError);
  return error as PlatError;
}

describe('discover', () => {
  it('without protected-resource metadata (404) the base URL is the issuer', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(BASE)),
    });
    const d = await discover(f.deps, BASE, NOW);
    // RFC 9728 §5.1: the API itself is asked for a challenge naming its metadata before plat settles on the base URL.
    expect(f.urls()).toEqual([`${BASE}/.well-known/oauth-protected-resource`, `${BASE}/`, `${BASE}/.well-known/oauth-authorization-server`]);
    expect(d.issuer).toBe(BASE);
    expect(d.baseUrl).toBe(BASE);
    expect(d.resource).toBeUndefined();
    expect(d.filledFromSpec).toEqual([]);
    expect(d.fetchedAt).toBe(NOW);
    expect(d.as.token_endpoint).toBe(`${BASE}/api/oauth/token`);
    // every request carries the size bound for OAuth documents
    expect(f.calls.every((c) => c.init?.maxBodyBytes === MAX_OAUTH_BODY_BYTES)).toBe(true);
  });

  it('follows protected-resource metadata that names another https issuer', async () => {
    const AUTH = 'https://auth.example';
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-protected-resource`]: () => json({ resource: BASE, authorization_servers: [AUTH] }),
      [`${AUTH}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(AUTH)),
    });
    const d = await discover(f.deps, BASE, NOW);
    expect(d.issuer).toBe(AUTH);
    expect(d.resource?.authorization_servers).toEqual([AUTH]);
    expect(f.urls()).not.toContain(`${BASE}/.well-known/oauth-authorization-server`);
  });

  it('refuses protected-resource metadata that names a plain-http issuer, without contacting it', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-protected-resource`]: () => json({ resource: BASE, authorization_servers: ['http://auth.example'] }),
    });
    const error = await rejection(discover(f.deps, BASE, NOW));
    expect(error.exitCode).toBe(ExitCode.failure);
    expect(error.message).toMatch(/not https:\/\/ \(http:\/\/auth\.example\)/);
    expect(f.urls().some((u) => u.startsWith('http://auth.example'))).toBe(false);
  });

  it('falls back to OpenID discovery when RFC 8414 metadata is 404', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/openid-configuration`]: () => json(fullMetadata(BASE)),
    });
    const d = await discover(f.deps, BASE, NOW);
    expect(f.urls()).toEqual([
      `${BASE}/.well-known/oauth-protected-resource`,
      `${BASE}/`,
      `${BASE}/.well-known/oauth-authorization-server`,
      `${BASE}/.well-known/openid-configuration`,
    ]);
    expect(d.issuer).toBe(BASE);
  });

  it('refuses metadata that names a different issuer', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-authorization-server`]: () => json(fullMetadata('https://evil.example')),
    });
    const error = await rejection(discover(f.deps, BASE, NOW));
    expect(error.exitCode).toBe(ExitCode.failure);
    expect(error.message).toMatch(/names a different issuer/);
  });

  it('fills from the spec only the endpoints the metadata leaves out', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-authorization-server`]: () =>
        json({
          issuer: BASE,
          authorization_endpoint: `${BASE}/custom/authorize`,
          token_endpoint: `${BASE}/custom/token`,
          userinfo_endpoint: `${BASE}/custom/userinfo`,
        }),
    });
    const d = await discover(f.deps, BASE, NOW);
    expect(d.filledFromSpec.sort()).toEqual(['registration_endpoint', 'revocation_endpoint']);
    expect(d.as.registration_endpoint).toBe(`${BASE}${SPEC_PATHS.registration_endpoint}`);
    expect(d.as.revocation_endpoint).toBe(`${BASE}${SPEC_PATHS.revocation_endpoint}`);
    expect(d.as.authorization_endpoint).toBe(`${BASE}/custom/authorize`);
    expect(d.as.token_endpoint).toBe(`${BASE}/custom/token`);
  });

  it('keeps an http endpoint of an https issuer in the document but refuses it when it is used', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(BASE, { token_endpoint: 'http://api.example/api/oauth/token' })),
    });
    const d = await discover(f.deps, BASE, NOW);
    expect(() => assertSecureEndpoint(d.as, 'token_endpoint')).toThrow(PlatError);
    expect(() => assertSecureEndpoint(d.as, 'token_endpoint')).toThrow(/token_endpoint is not https:\/\//);
    expect(assertSecureEndpoint(d.as, 'authorization_endpoint').href).toBe(`${BASE}/oauth/authorize`);
  });

  it('works over plain http on loopback', async () => {
    const LOCAL = 'http://127.0.0.1:8999';
    const f = fakeFetch({ [`${LOCAL}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(LOCAL)) });
    const d = await discover(f.deps, LOCAL, NOW);
    expect(d.issuer).toBe(LOCAL);
  });

  it('passes over an HTML page instead of protected-resource metadata (RFC 9728 has the API as its own server then)', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-protected-resource`]: () =>
        new Response('<!doctype html><title>Login</title>', { status: 200, headers: { 'content-type': 'text/html' } }),
      [`${BASE}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(BASE)),
    });
    const d = await discover(f.deps, BASE, NOW);
    expect(d.resource).toBeUndefined();
    expect(d.issuer).toBe(BASE);
  });

  it('a base URL with a path: the path-suffixed address (RFC 9728 §3.1); the origin\'s own document is for another resource', async () => {
    const API = `${BASE}/mcp`;
    const AUTH = 'https://auth.example';
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-protected-resource/mcp`]: () => json({ resource: API, authorization_servers: [AUTH] }),
      [`${BASE}/.well-known/oauth-protected-resource`]: () => json({ resource: BASE, authorization_servers: ['https://evil.example'] }),
      [`${AUTH}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(AUTH)),
    });
    const d = await discover(f.deps, API, NOW);
    expect(f.urls()[0]).toBe(`${BASE}/.well-known/oauth-protected-resource/mcp`);
    expect(d.issuer).toBe(AUTH);
    expect(d.resource?.resource).toBe(API);
  });

  it('never uses a protected-resource document for another API (RFC 9728 §3.3), at any address', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-protected-resource/v1`]: () => json({ resource: `${BASE}/v2`, authorization_servers: ['https://evil.example'] }),
      [`${BASE}/.well-known/oauth-protected-resource`]: () => json({ resource: 'https://other.example', authorization_servers: ['https://evil.example'] }),
      [`${BASE}/v1/.well-known/oauth-authorization-server`]: () => json(fullMetadata(`${BASE}/v1`)),
      [`${BASE}/.well-known/oauth-authorization-server/v1`]: () => json(fullMetadata(`${BASE}/v1`)),
    });
    const d = await discover(f.deps, `${BASE}/v1`, NOW);
    expect(d.issuer).toBe(`${BASE}/v1`);
    expect(f.urls().some((u) => u.includes('evil.example'))).toBe(false);
  });

  it('follows the resource_metadata of the API\'s own 401 challenge (RFC 9728 §5.1) when no well-known address has a document', async () => {
    const AUTH = 'https://auth.example';
    const f = fakeFetch({
      [`${BASE}/`]: () =>
        new Response('{}', { status: 401, headers: { 'www-authenticate': `Bearer resource_metadata="${BASE}/meta/prm.json"`, 'content-type': 'application/json' } }),
      [`${BASE}/meta/prm.json`]: () => json({ resource: BASE, authorization_servers: [AUTH] }),
      [`${AUTH}/.well-known/oauth-authorization-server`]: () => json(fullMetadata(AUTH)),
    });
    const d = await discover(f.deps, BASE, NOW);
    expect(d.issuer).toBe(AUTH);
    expect(f.urls()).toContain(`${BASE}/meta/prm.json`);
  });

  it('falls through on 401, 403, 405 and HTML at every metadata address, then lists each address and its answer', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-authorization-server`]: () => new Response('no', { status: 401 }),
      [`${BASE}/.well-known/openid-configuration`]: () => new Response('<html>', { status: 200, headers: { 'content-type': 'text/html' } }),
    });
    const error = await rejection(discover(f.deps, BASE, NOW));
    expect(error.exitCode).toBe(ExitCode.failure);
    expect(error.message).toMatch(/found no usable sign-in metadata for https:\/\/api\.example/);
    expect(error.message).toContain(`${BASE}/.well-known/oauth-authorization-server (HTTP 401)`);
    expect(error.message).toContain(`${BASE}/.well-known/openid-configuration (not JSON: text/html)`);
  });

  it('OpenID discovery with the issuer\'s path inserted, as some servers publish it', async () => {
    const ISSUER = `${BASE}/realms/school`;
    const f = fakeFetch({
      [`${BASE}/.well-known/openid-configuration/realms/school`]: () => json(fullMetadata(ISSUER)),
    });
    const d = await discover(f.deps, ISSUER, NOW);
    expect(d.issuer).toBe(ISSUER);
  });
});

describe('discover: redirects at metadata addresses', () => {
  const redirect = (location: string, status = 301) => () => new Response(null, { status, headers: { location } });

  it('follows, once, a same-origin redirect that only appends a slash (relative or absolute Location)', async () => {
    for (const location of ['/.well-known/openid-configuration/', `${BASE}/.well-known/openid-configuration/`]) {
      const f = fakeFetch({
        [`${BASE}/.well-known/openid-configuration`]: redirect(location),
        [`${BASE}/.well-known/openid-configuration/`]: () => json(fullMetadata(BASE)),
      });
      const d = await discover(f.deps, BASE, NOW);
      expect(d.issuer).toBe(BASE);
      expect(f.urls().filter((u) => u.includes('openid-configuration'))).toEqual([`${BASE}/.well-known/openid-configuration`, `${BASE}/.well-known/openid-configuration/`]);
    }
  });

  it.each<[string, string]>([
    ['another origin, with the slash', 'https://elsewhere.example/.well-known/openid-configuration/'],
    ['the same origin, another path', `${BASE}/moved/.well-known/openid-configuration`],
    ['the slash and a query', `${BASE}/.well-known/openid-configuration/?x=1`],
  ])('does not follow a redirect to %s: recorded as "redirected to …", and the next address is tried', async (_what, location) => {
    const f = fakeFetch({ [`${BASE}/.well-known/openid-configuration`]: redirect(location, 302) });
    const error = await rejection(discover(f.deps, BASE, NOW));
    expect(error.message).toContain(`${BASE}/.well-known/openid-configuration (HTTP 302, redirected to ${location})`);
    expect(f.urls()).not.toContain(location);
  });

  it('a redirect without a Location (or one that is not a URL) is recorded as such', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/oauth-authorization-server`]: () => new Response(null, { status: 307 }),
      [`${BASE}/.well-known/openid-configuration`]: redirect('http://[bad'),
    });
    const error = await rejection(discover(f.deps, BASE, NOW));
    expect(error.message).toContain(`${BASE}/.well-known/oauth-authorization-server (HTTP 307, a redirect without a usable Location)`);
    expect(error.message).toContain(`${BASE}/.well-known/openid-configuration (HTTP 301, a redirect without a usable Location)`);
  });

  it('a redirect of the slash form itself is not followed further', async () => {
    const f = fakeFetch({
      [`${BASE}/.well-known/openid-configuration`]: redirect('/.well-known/openid-configuration/'),
      [`${BASE}/.well-known/openid-configuration/`]: redirect('/.well-known/openid-configuration//'),
    });
    const error = await rejection(discover(f.deps, BASE, NOW));
    expect(error.message).toContain(`${BASE}/.well-known/openid-configuration/ (HTTP 301, redirected to ${BASE}/.well-known/openid-configuration//)`);
    expect(f.urls()).not.toContain(`${BASE}/.well-known/openid-configuration//`);
  });
});

describe('discover: a protected-resource document at an address plat was given', () => {
  const API = `${BASE}/mcp`;
  const document = { resource: API, authorization_servers: ['https://as.example'] };

  it('is asked first, and its authorization server used', async () => {
    const f = fakeFetch({
      [`${BASE}/custom/prm.json`]: () => json(document),
      ['https://as.example/.well-known/oauth-authorization-server']: () => json(fullMetadata('https://as.example')),
    });
    const d = await discover(f.deps, API, NOW, { resourceMetadata: `${BASE}/custom/prm.json` });
    expect(d.issuer).toBe('https://as.example');
    expect(f.urls()[0]).toBe(`${BASE}/custom/prm.json`);
  });

  it('is never fetched over http for an https API, nor used when it is for another API', async () => {
    const insecure = fakeFetch({ ['http://api.example/prm.json']: () => json(document) });
    const refused = await rejection(discover(insecure.deps, API, NOW, { resourceMetadata: 'http://api.example/prm.json' }));
    expect(refused.message).toContain('http://api.example/prm.json (not https://)');
    expect(insecure.urls()).not.toContain('http://api.example/prm.json');
    const other = fakeFetch({ [`${BASE}/prm.json`]: () => json({ ...document, resource: 'https://other.example' }) });
    const skipped = await rejection(discover(other.deps, API, NOW, { resourceMetadata: `${BASE}/prm.json` }));
    expect(skipped.message).toContain(`${BASE}/prm.json (a document for another API (https://other.example))`);
  });
});

describe('assertS256', () => {
  const as = (methods?: string[]): oauth.AuthorizationServer => ({ issuer: BASE, code_challenge_methods_supported: methods });

  it('refuses a list without S256, naming what is offered', () => {
    expect(() => assertS256(as(['plain']))).toThrow(/it offers: plain/);
    expect(() => assertS256(as([]))).toThrow(/it offers: none/);
  });

  it('accepts a list with S256 and a missing list', () => {
    expect(() => assertS256(as(['plain', 'S256']))).not.toThrow();
    expect(() => assertS256(as(undefined))).not.toThrow();
  });
});

describe('assertSecureEndpoint', () => {
  it('returns https endpoints, and loopback-http ones of a loopback-http issuer, as URLs', () => {
    const as = { issuer: BASE, token_endpoint: `${BASE}/t` } as oauth.AuthorizationServer;
    expect(assertSecureEndpoint(as, 'token_endpoint')).toEqual(new URL(`${BASE}/t`));
    const local = { issuer: 'http://127.0.0.1:4', revocation_endpoint: 'http://127.0.0.1:5/r' } as oauth.AuthorizationServer;
    expect(assertSecureEndpoint(local, 'revocation_endpoint').port).toBe('5');
  });

  it('refuses a plain-http endpoint of an https issuer even on loopback (any local process could listen there)', () => {
    const as = { issuer: BASE, revocation_endpoint: 'http://127.0.0.1:5/r' } as oauth.AuthorizationServer;
    expect(() => assertSecureEndpoint(as, 'revocation_endpoint')).toThrow(/revocation_endpoint is not https:\/\/ \(http:\/\/127\.0\.0\.1:5\)/);
  });

  it('refuses a malformed endpoint as invalid, and says a missing one is not offered', () => {
    const as = { issuer: BASE, userinfo_endpoint: 'not a url' } as oauth.AuthorizationServer;
    expect(() => assertSecureEndpoint(as, 'userinfo_endpoint')).toThrow(/invalid userinfo_endpoint/);
    expect(() => assertSecureEndpoint(as, 'registration_endpoint')).toThrow(/offers no registration_endpoint/);
  });
});
