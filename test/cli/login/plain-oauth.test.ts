/**
 * A plain OAuth 2.x server (issue 22): the reference platform made to list no identity scopes, so plat asks for
 * none, gets no ID token, and still runs the whole journey; whoami says plainly that the server does not tell who
 * you are (exit 0). The independent plain servers (test/interop/) run the same journey on code no one here wrote.
 */
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../../helpers/cli.js';
import { approving, param, signIn } from '../../helpers/consent.js';
import { readProfile, readStoredSession } from '../../helpers/state.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();
const API_ONLY = ['courses:read', 'courses:write', 'students:read', 'analytics:read'];

describe('a server that lists no openid', () => {
  it('asks for no identity scope, needs no ID token, and the journey works: login, whoami, call, refresh, logout', async () => {
    platform.knobs.metadataOverrides = { scopes_supported: API_ONLY };
    const { result, consent } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(param(consent.urls[0]!, 'scope')).toBe('courses:read');
    expect(param(consent.urls[0]!, 'nonce')).toBeNull();
    expect(result.stdout).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ \(the server does not say as whom: it issued no ID token\)/);
    expect(result.stderr).not.toMatch(/warning|error/);
    const session = await readStoredSession(home);
    expect(session.idToken).toBeUndefined();
    expect(session.scopes).toEqual(['courses:read']);
    expect((await readProfile(home)).user).toBeUndefined();

    const whoami = await home.run(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/User\s+\(the server does not say\)/);
    expect(whoami.stdout).toMatch(/Scopes\s+courses:read/);
    expect(whoami.stdout).toMatch(/Token\s+expires in/);
    expect(whoami.stderr).toMatch(/the server issued no ID token: it does not tell plat who you are\. The session itself works/);
    expectCleanError(whoami);
    const json = await home.run(['whoami', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({});

    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ anonymous: false });
    expect((await home.run(['refresh'])).code).toBe(0);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    const logout = await home.run(['logout']);
    expect(logout.stdout).toMatch(/the tokens were revoked at the server/);
  });

  it('a plain plat login with nothing to ask for sends no scope at all (RFC 6749 §3.3), not an empty one', async () => {
    platform.knobs.metadataOverrides = { scopes_supported: API_ONLY };
    const consent = approving(platform);
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { onStderr: consent.onStderr });
    expect(new URL(consent.urls[0]!).searchParams.has('scope')).toBe(false);
    // oidc-provider grants nothing for a request that names no scope, and says access_denied: the server's call
    expect(result.code).toBe(4);
    expectCleanError(result);
  });
});
