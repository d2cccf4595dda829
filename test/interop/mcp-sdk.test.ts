/**
 * The whole journey through the built CLI against the MCP TypeScript SDK's authorization server
 * (@modelcontextprotocol/sdk's mcpAuthRouter; test/interop/mcp-sdk/server.mjs): a plain OAuth 2.1 server that
 * issues no ID token, lists no openid and offers no UserInfo, on an origin of its own named by the API's RFC 9728
 * document; an API that accepts only tokens bound to it (RFC 8707, the SDK's bearer middleware); a revocation
 * endpoint whose metadata lists only client_secret_post but which revokes a public client's tokens. Registration,
 * rotation and revocation are read from the server's own records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, type Home } from '../helpers/cli.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { loginAt } from './journey.js';
import { startNodeServer, type InteropServer } from './servers.js';

const SIGN_IN = { username: 'ada', password: 'analytical engine', decision: 'approve' };
const IDENTITY_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

describe('MCP TypeScript SDK (plain OAuth 2.1, no openid, no ID token): the whole journey', () => {
  let server: InteropServer;
  let home: Home;
  let authorize: string;
  let resource: string;
  beforeAll(async () => {
    server = await startNodeServer('mcp-sdk/server.mjs');
    home = await makeHome();
    authorize = new URL('/authorize', server.issuer).href;
    resource = (await server.state()).resource;
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login: registers once as a public client, asks only for scopes the server lists, sends resource; no ID token is needed', async () => {
    const { result, authorizeUrl } = await loginAt(home, server.baseUrl, authorize, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    expect(result.stdout).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+/);
    expect(result.stdout).toMatch(/Scopes: courses:read/);
    const asked = authorizeUrl!.searchParams.get('scope')!.split(' ');
    expect(asked).toContain('courses:read');
    for (const scope of IDENTITY_SCOPES) expect(asked).not.toContain(scope);
    expect(authorizeUrl!.searchParams.get('nonce')).toBeNull(); // a nonce belongs to an OpenID request
    expect(authorizeUrl!.searchParams.get('resource')).toBe(resource); // RFC 8707, the API's own identifier

    const { registrations, tokens } = await server.state();
    expect(registrations).toHaveLength(1);
    expect(registrations[0]).toMatchObject({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
    expect(registrations[0].scope.split(' ')).not.toContain('openid');
    const session = await readStoredSession(home);
    expect(session.idToken).toBeUndefined();
    expect(tokens).toEqual([expect.objectContaining({ access_token: session.accessToken, refresh_token: session.refreshToken, scope: 'courses:read', resource })]);
    expect((await readProfile(home)).issuer).toBe(server.issuer);
  });

  it('whoami: exit 0, saying plainly that the server does not tell who you are', async () => {
    const result = await home.run(['whoami']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/does not tell plat who you are/);
    expect(result.stdout).not.toMatch(/undefined/);
  });

  it('call: the API (the SDK’s bearer middleware, audience checked) accepts the token', async () => {
    const result = await home.run(['call', 'GET', '/v1/courses']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ items: [{ title: 'Difference engines' }], user: 'user-ada' });
  });

  it('call --paginate: both of the API’s pages, the second through its next_cursor, each with the token', async () => {
    const result = await home.run(['call', 'GET', '/v1/courses', '--paginate']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      { id: 'c1', title: 'Difference engines' },
      { id: 'c2', title: 'Analytical engines' },
    ]);
  });

  it('refresh: the server spends the old refresh token and plat keeps the new pair, still bound to the API', async () => {
    const before = await readStoredSession(home);
    const result = await home.run(['refresh']);
    expect(result.code, result.stderr).toBe(0);
    const after = await readStoredSession(home);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    const { tokens } = await server.state();
    expect(tokens.find((t: any) => t.refresh_token === before.refreshToken)).toMatchObject({ refresh_revoked: true });
    expect(tokens.find((t: any) => t.refresh_token === after.refreshToken)).toMatchObject({ refresh_revoked: false, access_token: after.accessToken, resource });
    expect((await home.run(['call', 'GET', '/v1/courses'])).code).toBe(0);
  });

  it('logout: revocation is tried though the metadata lists only client_secret_post; both tokens revoked in the server’s records', async () => {
    const session = await readStoredSession(home);
    const result = await home.run(['logout']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/the tokens were revoked at the server/);
    const { tokens } = await server.state();
    expect(tokens.find((t: any) => t.access_token === session.accessToken)).toMatchObject({ access_revoked: true, refresh_revoked: true });
    await expect(readStoredSession(home)).rejects.toThrow(/ENOENT/);
    // The API, asking the SDK's verifier, now refuses the old token and points to its RFC 9728 document.
    const api = await fetch(`${server.baseUrl}/v1/courses`, { headers: { authorization: `Bearer ${session.accessToken}` } });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toMatch(/resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"/);
  });

  it('a second login reuses the registration', async () => {
    const { result } = await loginAt(home, server.baseUrl, authorize, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    const { registrations, tokens } = await server.state();
    expect(registrations).toHaveLength(1);
    expect(tokens.at(-1)).toMatchObject({ client_id: registrations[0].client_id, access_revoked: false });
  });
});

describe('MCP TypeScript SDK with the API under /mcp, as MCP servers are: RFC 9728’s path-suffixed metadata', () => {
  let server: InteropServer;
  let home: Home;
  let api: string;
  beforeAll(async () => {
    server = await startNodeServer('mcp-sdk/server.mjs', { resourcePath: '/mcp' });
    home = await makeHome();
    api = `${server.baseUrl}/mcp`;
  });
  afterAll(async () => {
    await home?.cleanup();
    await server?.close();
  });

  it('login with the base URL /mcp finds /.well-known/oauth-protected-resource/mcp (none at the origin), binds the token to it, and calls', async () => {
    expect((await fetch(`${server.baseUrl}/.well-known/oauth-protected-resource`)).status).toBe(404);
    const { result, authorizeUrl } = await loginAt(home, api, new URL('/authorize', server.issuer).href, SIGN_IN, ['--scope', 'courses:read']);
    expect(result.code, `${result.stderr}\n${server.log()}`).toBe(0);
    expect(authorizeUrl!.searchParams.get('resource')).toBe(api);
    const { wellKnownRequests, tokens } = await server.state();
    expect(wellKnownRequests).toContain('/.well-known/oauth-protected-resource/mcp');
    expect(tokens).toEqual([expect.objectContaining({ resource: api })]);
    const call = await home.run(['call', 'GET', '/v1/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ user: 'user-ada' });
  });
});
