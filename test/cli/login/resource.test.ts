/**
 * Resource indicators (RFC 8707): the resource the API's protected-resource metadata names is sent by default
 * (--resource names another) on the authorization, token and refresh requests, stored with the profile and reused. The platform then issues an API-audience token, which its UserInfo refuses: login
 * does not ask UserInfo, and whoami says why it cannot answer.
 */
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../../helpers/cli.js';
import { approving, param, signIn } from '../../helpers/consent.js';
import { readProfile, sessionFiles } from '../../helpers/state.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

/** The form bodies plat sent to the token endpoint, from its --verbose trace. */
const tokenRequestBodies = (stderr: string) => stderr.match(/^> (?=.*grant_type=)[^\n]*$/gm) ?? [];

describe('--resource', () => {
  it('is sent on authorize and token requests and stored; login does not ask UserInfo and the API accepts the token', async () => {
    const { result, consent: approval } = await signIn(home, platform, ['--resource', platform.baseUrl, '--scope', 'openid profile courses:read', '--verbose']);
    expect(param(approval.urls[0]!, 'resource')).toBe(platform.baseUrl);
    const [exchange] = tokenRequestBodies(result.stderr);
    expect(exchange).toMatch(/grant_type=authorization_code/);
    expect(exchange).toContain(`resource=${encodeURIComponent(platform.baseUrl)}`);
    expect(result.stdout).toContain(`Logged in to ${platform.baseUrl} as Ada Lovelace`);
    expect(result.stderr).toContain(`The tokens are bound to ${platform.baseUrl}, which UserInfo does not accept`);
    expect(result.stderr).not.toMatch(/warning/);
    expect(platform.stats.count('GET /api/oauth/userinfo')).toBe(0);
    expect(await readProfile(home)).toMatchObject({ resource: platform.baseUrl, user: { sub: 'user-ada' } });

    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ anonymous: false, sub: 'user-ada' });
  });

  it('status --check says it cannot check a token bound to an API through UserInfo, rather than calling it broken', async () => {
    await signIn(home, platform, ['--resource', platform.baseUrl, '--scope', 'openid courses:read']);
    const result = await home.run(['status', '--check', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const [profile] = JSON.parse(result.stdout).profiles;
    expect(profile.works).toBeUndefined();
    expect(profile.problem).toMatch(/^not checked: The session's tokens are bound to .*, which UserInfo does not accept; plat call shows whether it works/);
  });

  it('is sent again on refresh, and a later login without the flag keeps it', async () => {
    await signIn(home, platform, ['--resource', platform.baseUrl, '--scope', 'courses:read']);
    const refresh = await home.run(['refresh', '--verbose']);
    expect(refresh.code, refresh.stderr).toBe(0);
    const [body] = tokenRequestBodies(refresh.stderr);
    expect(body).toMatch(/grant_type=refresh_token/);
    expect(body).toContain(`resource=${encodeURIComponent(platform.baseUrl)}`);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);

    const { consent: approval } = await signIn(home, platform, ['--add-scope', 'analytics:read']);
    expect(param(approval.urls[0]!, 'resource')).toBe(platform.baseUrl);
    expect((await home.run(['call', 'GET', '/api/analytics'])).code).toBe(0);
  });

  it('whoami answers from the ID token for an API-bound token, without asking UserInfo or refreshing', async () => {
    await signIn(home, platform, ['--resource', platform.baseUrl, '--scope', 'openid profile courses:read']);
    platform.stats.reset();
    const whoami = await home.run(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/User\s+Ada Lovelace/);
    expect(whoami.stdout).toMatch(/Subject\s+user-ada/);
    expect(whoami.stderr).toMatch(/bound to .*which UserInfo does not accept: this is who signed in, from the ID token/);
    expectCleanError(whoami);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
    expect(platform.stats.count('GET /api/oauth/userinfo')).toBe(0);
    const json = await home.run(['whoami', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ sub: 'user-ada', name: 'Ada Lovelace' });
  });

  it('by default the resource the protected-resource metadata names is sent on authorize, token and refresh, quietly', async () => {
    const { result, consent: approval } = await signIn(home, platform, ['--scope', 'courses:read', '--verbose']);
    expect(param(approval.urls[0]!, 'resource')).toBe(platform.baseUrl);
    const [exchange] = tokenRequestBodies(result.stderr);
    expect(exchange).toContain(`resource=${encodeURIComponent(platform.baseUrl)}`);
    expect(result.stdout).toContain('as Ada Lovelace');
    expect(result.stdout).toMatch(/Scopes: openid profile email courses:read\n/); // the identity scopes went to the ID token
    expect(result.stderr).not.toMatch(/bound to|UserInfo/);
    expect(await readProfile(home)).toMatchObject({ resource: platform.baseUrl, resourceByDefault: true });
    const refresh = await home.run(['refresh', '--verbose']);
    expect(refresh.code, refresh.stderr).toBe(0);
    expect(tokenRequestBodies(refresh.stderr)[0]).toContain(`resource=${encodeURIComponent(platform.baseUrl)}`);
    expect((await readProfile(home)).scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);
    // the API accepts the bound token; whoami answers from the ID token without a note (the binding is the norm)
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    platform.stats.reset();
    const whoami = await home.run(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/User\s+Ada Lovelace/);
    expect(whoami.stderr).toBe('');
    // UserInfo is asked (some servers take a bound token); oidc-provider refuses it, and that is no news
    expect(platform.stats.count('GET /api/oauth/userinfo')).toBe(1);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });

  it('an API that publishes no protected-resource metadata: nothing is sent, and UserInfo names the user', async () => {
    platform.knobs.protectedResourceMetadata = 'missing';
    const { result, consent: approval } = await signIn(home, platform, ['--verbose']);
    expect(param(approval.urls[0]!, 'resource')).toBeNull();
    expect(tokenRequestBodies(result.stderr).join('\n')).not.toContain('resource=');
    expect(result.stdout).toContain('as Ada Lovelace');
    expect((await readProfile(home)).resource).toBeUndefined();
    expect(platform.stats.count('GET /api/oauth/userinfo')).toBe(1);
  });

  it('a server that refuses the default resource (invalid_target): one more sign-in without it, said once, and remembered', async () => {
    platform.knobs.refuseResources = true;
    const { result, consent: approval } = await signIn(home, platform, ['--scope', 'courses:read']);
    expect(approval.urls).toHaveLength(2);
    expect(param(approval.urls[0]!, 'resource')).toBe(platform.baseUrl);
    expect(param(approval.urls[1]!, 'resource')).toBeNull();
    expect(result.stderr.match(/does not accept the resource indicator .* \(invalid_target\); signing in without it/g)).toHaveLength(1);
    expect(platform.stats.count('register')).toBe(1); // the client of the first attempt is used again
    expect(await readProfile(home)).toMatchObject({ resourceRefusedBy: platform.issuer });
    expect((await readProfile(home)).resource).toBeUndefined();
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    // the next login does not send it again, and says nothing about it
    const again = await signIn(home, platform, ['--add-scope', 'students:read']);
    expect(again.consent.urls).toHaveLength(1);
    expect(param(again.consent.urls[0]!, 'resource')).toBeNull();
    expect(again.result.stderr).not.toMatch(/invalid_target/);
  });

  it('a resource the server does not serve ends the login with the server\'s error, nothing stored', async () => {
    const approval = approving(platform);
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--resource', 'https://api.elsewhere.example'], {
      onStderr: approval.onStderr,
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/returned an error instead of a code: invalid_target/);
    expectCleanError(result);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('a relative URI or one with a fragment is a usage error', async () => {
    for (const value of ['/api', 'https://api.example/#x']) {
      const result = await home.run(['login', '--base-url', platform.baseUrl, '--resource', value]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--resource must be an absolute URI without a fragment/);
    }
  });
});
