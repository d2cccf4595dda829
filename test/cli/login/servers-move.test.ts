/**
 * Servers that move and base URLs with a path (issue 43): after the path-inserted well-known addresses, discovery
 * tries the origin's own protected-resource document (its `resource` the origin or a path the base URL is under,
 * never another origin), then the origin's own authorization-server metadata (the 2025-03-26 MCP servers' layout);
 * `plat login` reads discovery afresh, so an authorization server that moved gets a registration of its own and never
 * sees the old client_id; with no scope named anywhere, `scope` is left out (RFC 6749 §3.3). The same changes run
 * against plain OAuth servers in test/interop/mcp-conformance.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { expectCleanError } from '../../helpers/cli.js';
import { approving, param, signIn } from '../../helpers/consent.js';
import { readProfile } from '../../helpers/state.js';
import { useHome, usePlatform } from '../../helpers/platform.js';
import { startPlatform } from '../../platform/index.mjs';

const platform = usePlatform();
const home = useHome();

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return true;
};

/** The origin's own protected-resource document answers `body`; every other address under it is left alone. */
function rootDocument(body: unknown): void {
  platform.override('/.well-known/oauth-protected-resource', (req, res) => (new URL(req.url!, 'http://x').pathname === '/.well-known/oauth-protected-resource' ? json(200, body)(res) : false));
}

/** `plat login --no-browser --base-url <base> …args`, approved on `at` (the platform by default). */
function loginAt(base: string, args: string[] = [], at = platform) {
  const consent = approving(at, { firstOnly: true });
  return home.run(['login', '--no-browser', '--base-url', base, ...args], { onStderr: consent.onStderr }).then((result) => ({ result, consent }));
}

describe('a base URL with a path', () => {
  const mcp = () => `${platform.baseUrl}/mcp`;

  it("finds the origin's own protected-resource document (its resource the origin) after the path-inserted address, and signs in", async () => {
    const { result, consent } = await loginAt(mcp(), ['--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(platform.stats.count('GET /.well-known/oauth-protected-resource/mcp')).toBe(1);
    expect(param(consent.url!, 'resource')).toBe(platform.baseUrl);
    expect(await readProfile(home)).toMatchObject({ baseUrl: mcp(), issuer: platform.issuer, resource: platform.baseUrl });
  });

  it("takes the origin's document for a path the base URL is under, never one for another path or another origin", async () => {
    rootDocument({ resource: `${platform.baseUrl}/`, authorization_servers: [platform.issuer] });
    expect((await loginAt(`${mcp()}/v1`, ['--scope', 'courses:read'])).result.code).toBe(0);
    for (const resource of [`${platform.baseUrl}/other`, `${platform.baseUrl}/mc`, 'https://elsewhere.example.test', platform.baseUrl.replace(/:\d+$/, ':9')]) {
      platform.clearOverrides();
      rootDocument({ resource, authorization_servers: ['https://elsewhere.example.test'] });
      const discover = await home.run(['discover', '--base-url', mcp(), '--refresh', '--json']);
      // Not used (the server it names cannot be reached): discovery went on to the origin's own metadata.
      expect(discover.code, `${resource}: ${discover.stderr}`).toBe(0);
      expect(JSON.parse(discover.stdout).issuer, resource).toBe(platform.issuer);
    }
  });

  it("with no protected-resource document anywhere, reads the origin's own authorization-server metadata (issuer the origin) and signs in", async () => {
    platform.knobs.protectedResourceMetadata = 'missing';
    const { result } = await loginAt(mcp(), ['--scope', 'courses:read']);
    expect(result.code, result.stderr).toBe(0);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server/mcp')).toBe(1);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(1);
    expect(await readProfile(home)).toMatchObject({ baseUrl: mcp(), issuer: platform.issuer });
    expect((await home.run(['call', 'GET', `${platform.baseUrl}/api/courses`])).code).toBe(0);
  });
});

describe('an authorization server that moved', () => {
  it('plat login reads discovery afresh: the new server gets a registration of its own, and the old client_id is never presented to it', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    const old = (await readProfile(home)).client.clientId as string;
    const moved = await startPlatform();
    // The new server takes the API as a resource (RFC 8707), as a server that took it over would.
    moved.knobs.extraResources = [platform.baseUrl];
    try {
      // The API now names another authorization server (within the discovery cache's hour).
      rootDocument({ resource: platform.baseUrl, authorization_servers: [moved.issuer] });
      const { result, consent } = await loginAt(platform.baseUrl, ['--scope', 'courses:read', '--timeout', '30'], moved);
      expect(result.code, result.stderr).toBe(0);
      expect(new URL(consent.url!).origin).toBe(moved.baseUrl);
      expect(moved.stats.count('register')).toBe(1);
      expect(moved.authorizations.map((a) => a.clientId)).not.toContain(old);
      const profile = await readProfile(home);
      expect(profile).toMatchObject({ baseUrl: platform.baseUrl, issuer: moved.issuer });
      expect(profile.client.clientId).not.toBe(old);
      expect(param(consent.url!, 'client_id')).toBe(profile.client.clientId);
    } finally {
      await moved.close();
    }
  });
});

describe('no scope named anywhere', () => {
  it('with no --scope/--for and neither the server nor the API listing scopes, the authorization request carries no scope (RFC 6749 §3.3)', async () => {
    platform.knobs.metadataOverrides = { scopes_supported: null };
    rootDocument({ resource: platform.baseUrl, authorization_servers: [platform.issuer] });
    const { result, consent } = await loginAt(platform.baseUrl);
    expect(consent.url, result.stderr).toBeDefined();
    expect(new URL(consent.url!).searchParams.has('scope')).toBe(false);
    expect(param(consent.url!, 'nonce')).toBeNull();
    // oidc-provider grants nothing for a request that names no scope (access_denied): the server's call, said as such
    expect([0, 4]).toContain(result.code);
    expectCleanError(result);
  });

  it('a scope named anywhere is still asked for: --scope, or a list from the server', async () => {
    platform.knobs.metadataOverrides = { scopes_supported: null };
    rootDocument({ resource: platform.baseUrl, authorization_servers: [platform.issuer] });
    const named = await loginAt(platform.baseUrl, ['--scope', 'courses:read']);
    expect(named.result.code, named.result.stderr).toBe(0);
    expect(param(named.consent.url!, 'scope')!.split(' ')).toContain('courses:read');
    rootDocument({ resource: platform.baseUrl, authorization_servers: [platform.issuer], scopes_supported: ['courses:read'] });
    const listed = await loginAt(platform.baseUrl);
    expect(param(listed.consent.url!, 'scope')).not.toBeNull();
  });
});
