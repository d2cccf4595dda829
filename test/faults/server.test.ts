/**
 * A hostile or broken authorization server: bad metadata, failed registration, malformed token responses, a
 * callback that is missing `iss` or carries the wrong one, a second or forged callback. Each case: the contract's
 * exit code, a sentence on stderr, no stack trace, and no session written (or, for a session that exists, none
 * destroyed) wrongly.
 */
import { describe, expect, it } from 'vitest';
import { type Home, type PlatResult } from '../helpers/cli.js';
import { type Knobs, type Platform, type TokenResponseKnob } from '../platform/index.mjs';
import { approving, AUTHORIZE_URL, redirectPort, signIn } from '../helpers/consent.js';
import { listFiles, readState, sessionBytes } from '../helpers/state.js';
import { expectConsistent, expectFailure, expectSuccess } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

/** A login that approves consent if a URL is printed; `deliver` hands the callback over (default: the browser lands). */
function login(args: string[] = [], deliver?: (callback: string, authorizeUrl: string) => Promise<void>): Promise<PlatResult> {
  const approval = approving(platform, { firstOnly: true, ...(deliver ? { deliver: (cb: string, _child: unknown, url: string) => deliver(cb, url) } : {}) });
  return home.run(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { onStderr: approval.onStderr });
}

/** Nothing of a session on disk: no token file, no logged-in profile (the metadata cache may remain). */
async function expectNoSession(h: Home = home) {
  expect(await listFiles(`${h.configDir}/tokens`)).toEqual([]);
  const { profile } = await readState(h);
  expect(profile?.loggedIn ?? false).toBe(false);
  expect(await expectConsistent(h)).not.toBe('logged-in');
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_req: unknown, res: import('node:http').ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
  return true;
};

describe('metadata', () => {
  it.each<[string, Partial<Knobs> | (() => void), RegExp]>([
    ['an HTML page at every well-known address', { metadata: 'html' }, /found no usable sign-in metadata for .*It asked: .*\/\.well-known\/oauth-authorization-server \(not JSON: text\/html\); .*\/\.well-known\/openid-configuration \(not JSON: text\/html\)/],
    ['truncated JSON at every well-known address', { metadata: 'truncated' }, /found no usable sign-in metadata .*(JSON that cannot be parsed|not JSON)/],
    ['another issuer', { metadata: 'wrong-issuer' }, /names a different issuer than the one it is served for; plat will not trust it/],
    ['a protected-resource document naming an http:// server', () => platform.override('/.well-known/oauth-protected-resource', json(200, { resource: platform.baseUrl, authorization_servers: ['http://auth.example.test'] })), /authorization server that is not https:\/\/ \(http:\/\/auth\.example\.test\); plat refuses to use it/],
    ['a protected-resource document naming a server that is not a URL', () => platform.override('/.well-known/oauth-protected-resource', json(200, { resource: platform.baseUrl, authorization_servers: ['not a url'] })), /names an authorization server that is not a URL/],
  ])('%s: login exits 1 before registering or opening anything, storing nothing', async (_what, setup, message) => {
    if (typeof setup === 'function') setup();
    else Object.assign(platform.knobs, setup);
    const result = await login();
    expectFailure(result, 1, message);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(platform.stats.count('register')).toBe(0);
    await expectNoSession();
    // discover says the same, and caches nothing it could not use
    const discover = await home.run(['discover', '--base-url', platform.baseUrl]);
    expectFailure(discover, 1, message);
    expect(await listFiles(`${home.configDir}/cache`)).toEqual([]);
  });

  // Liberal where nothing is at stake (issue 22): an address that answers with an error, HTML or a document that is
  // not for this API is passed over for the next one, and the platform's own metadata is still found.
  it.each<[string, () => void]>([
    ['HTTP 500 for RFC 8414 metadata (OpenID discovery answers)', () => platform.override('/.well-known/oauth-authorization-server', json(500, 'oops'))],
    ['HTTP 401 for RFC 8414 metadata', () => platform.override('/.well-known/oauth-authorization-server', json(401, { error: 'unauthorized' }))],
    ['a JSON array for RFC 8414 metadata', () => platform.override('/.well-known/oauth-authorization-server', json(200, [1, 2]))],
    ['an HTML protected-resource document', () => platform.override('/.well-known/oauth-protected-resource', (_q, s) => (s.writeHead(200, { 'content-type': 'text/html' }), s.end('<html>'), true))],
    ['a protected-resource document for another API (RFC 9728 §3.3: never used)', () => platform.override('/.well-known/oauth-protected-resource', json(200, { resource: 'https://other.example.test', authorization_servers: ['https://evil.example.test'] }))],
  ])('%s: passed over; discover finds the platform', async (_what, setup) => {
    setup();
    const discover = await home.run(['discover', '--base-url', platform.baseUrl, '--json']);
    expect(discover.code, discover.stderr).toBe(0);
    const document = JSON.parse(discover.stdout);
    expect(document.issuer).toBe(platform.issuer);
    expect(JSON.stringify(document)).not.toContain('evil.example.test');
  });

  it('OpenID configuration served only at the address with a trailing slash (a 301 to it, as Django answers): the one redirect followed, and login works', async () => {
    platform.knobs.metadataAddress = 'slash-only';
    const result = await login(['--scope', 'courses:read']);
    expectSuccess(result);
    expect(platform.stats.count('GET /.well-known/openid-configuration')).toBe(1);
    expect(platform.stats.count('GET /.well-known/openid-configuration/')).toBeGreaterThanOrEqual(1);
    expect(await expectConsistent(home)).toBe('logged-in');
    expectSuccess(await home.run(['call', 'GET', '/api/courses']));
  });

  it.each<[string, (path: string) => string]>([
    ['another origin', () => 'http://127.0.0.2:9/steal'],
    ['another path on the same origin', (path) => `${platform.baseUrl}/moved${path}`],
  ])('every well-known address redirecting to %s: none followed, each recorded as "redirected to …" and the next tried, exit 1', async (_what, target) => {
    platform.override('/.well-known/', (req, res) => {
      res.writeHead(302, { location: target(req.url ?? '/') });
      res.end();
      return true;
    });
    const result = await login();
    expectFailure(result, 1, /found no usable sign-in metadata for /);
    const wellKnown = ['oauth-protected-resource', 'oauth-authorization-server', 'openid-configuration'];
    for (const name of wellKnown) expect(result.stderr).toMatch(new RegExp(`/\\.well-known/${name} \\(HTTP 302, redirected to ${target(`/.well-known/${name}`).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
    expect(Object.keys(platform.stats.keys()).filter((key) => key.includes('/moved'))).toEqual([]);
    expect(platform.stats.count('register')).toBe(0);
    await expectNoSession();
  });

  it('missing authorization and token endpoints are filled from the documented paths: login works there, discover says so', async () => {
    platform.knobs.metadata = 'missing-endpoints';
    const result = await login(['--verbose']);
    expectSuccess(result);
    expect(result.stderr).toMatch(/The metadata lacks authorization_endpoint, token_endpoint; using the platform's documented paths/);
    expect(new URL(AUTHORIZE_URL.exec(result.stderr)![1]!).pathname).toBe('/oauth/authorize');
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    const discover = JSON.parse((await home.run(['discover', '--json', '--refresh'])).stdout);
    expect(discover.filledFromSpec.sort()).toEqual(['authorization_endpoint', 'token_endpoint']);
    expect(discover.endpoints.token).toBe(`${platform.baseUrl}/api/oauth/token`);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('a missing endpoint the server does not serve at the documented path either: UserInfo (said truthfully: none there, the ID token answers)', async () => {
    platform.knobs.metadataOverrides = { userinfo_endpoint: null };
    platform.knobs.protectedResourceMetadata = 'missing'; // tokens not bound to the API, so UserInfo would be asked
    platform.override('/api/oauth/userinfo', json(404, { error: 'not_found' }));
    const result = await login();
    expectSuccess(result);
    expect(result.stderr).not.toMatch(/warning|Try again later|HTTP 404/);
    expect(result.stdout).toMatch(/as user-ada/); // from the ID token's subject
    expect(await expectConsistent(home)).toBe('logged-in');
    const whoami = await home.run(['whoami']);
    expectSuccess(whoami);
    expect(whoami.stderr).toMatch(/lists no UserInfo endpoint and has none at the platform's documented path: this is who signed in, from the ID token/);
    expect(whoami.stderr).not.toMatch(/Try again later/);
  });

  it('a UserInfo endpoint the metadata lists that answers 404: whoami says so with its status, and the ID token answers', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // tokens not bound to the API, so UserInfo is asked
    await signIn(home, platform);
    platform.override('/api/oauth/userinfo', json(404, { error: 'not_found' }));
    const whoami = await home.run(['whoami']);
    expectSuccess(whoami);
    expect(whoami.stdout).toMatch(/user-ada|Ada Lovelace/);
    expect(whoami.stderr).toMatch(/^The authorization server's UserInfo endpoint answered HTTP 404: this is who signed in, from the ID token\.$/m);
  });

  it('a UserInfo endpoint that refuses the token even after a refresh: exit 4 and plat login; one that then fails otherwise: that failure', async () => {
    platform.knobs.protectedResourceMetadata = 'missing';
    await signIn(home, platform);
    let answers = 0;
    let second: [number, object] = [401, { error: 'invalid_token' }];
    platform.override('/api/oauth/userinfo', (_req, res) => {
      const [status, body] = answers++ % 2 === 0 ? [401, { error: 'invalid_token' }] : second;
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 401 ? { 'www-authenticate': 'Bearer error="invalid_token"' } : {}) });
      res.end(JSON.stringify(body));
      return true;
    });
    const rejected = await home.run(['whoami']);
    expectFailure(rejected, 4, /^error: The server rejected the token even after a refresh\. Run: plat login$/m);
    expect(platform.stats.count('token:refresh_token')).toBe(1);

    second = [503, { error: 'temporarily_unavailable' }];
    const failed = await home.run(['whoami']);
    expectFailure(failed, 1, /^error: While reading your user information, http:\/\/127\.0\.0\.1:\d+ answered with HTTP 503 \(temporarily_unavailable\)\. Try again later\.$/m);
  });

  it('a missing endpoint the server does not serve at the documented path either: revocation (logout says the server offers none, forgets the tokens)', async () => {
    await signIn(home, platform);
    platform.knobs.metadataOverrides = { revocation_endpoint: null };
    platform.override('/api/oauth/revoke', json(404, { error: 'not_found' }));
    expectSuccess(await home.run(['discover', '--refresh']));
    const result = await home.run(['logout']);
    expectSuccess(result);
    // Said with the capability's own sentence, not as a failure to retry.
    expect(result.stdout).toMatch(/the server offers no revocation, so the tokens were only removed from this machine/);
    expect(result.stderr).not.toMatch(/Try again later|warning/);
    expect(await expectConsistent(home)).toBe('logged-out');
  });

  it('a token endpoint on plain http (not loopback): refused before anything opens, so no code exists to send there', async () => {
    platform.knobs.metadata = 'http-endpoint';
    const result = await login();
    expectFailure(result, 1, /token_endpoint is not https:\/\/ \(http:\/\/platform\.example\.test\); plat refuses to use it/);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(platform.stats.count('register')).toBe(0);
    await expectNoSession();
  });
});

describe('registration', () => {
  it.each<[Knobs['registration'], RegExp]>([
    ['error-500', /While registering plat as a client, .* answered with an unexpected HTTP 500/],
    ['error-400-oauth', /The server refused to register plat \(invalid_client_metadata: client registration rejected by policy\)\. Try again later, or use a pre-registered integration with --client-id/],
    ['error-400-plain', /While registering plat as a client, .*HTTP 400/],
    ['no-client-id', /While registering plat as a client, the server broke the protocol \(the response body "client_id" property must be a string\)/],
  ])('%s: exit 1 before opening anything, nothing stored', async (knob, message) => {
    platform.knobs.registration = knob;
    const result = await login();
    expectFailure(result, 1, message);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    // invalid_client_metadata may be the device grant asked for beside the code grant: asked once more without it
    expect(platform.stats.count('register')).toBe(knob === 'error-400-oauth' ? 2 : 1);
    await expectNoSession();
  });

  it('a stored registration is kept when a new one would fail: a failed registration destroys nothing', async () => {
    await signIn(home, platform);
    platform.stats.reset();
    const before = await sessionBytes(home);
    platform.knobs.registration = 'error-500';
    // a login with the stored registration needs no registration at all
    const again = await login();
    expectSuccess(again);
    expect(platform.stats.count('register')).toBe(0);
    platform.knobs.registration = 'error-400-oauth';
    const other = await home.run(['login', '--no-browser', '--profile', 'other', '--base-url', platform.baseUrl]);
    expectFailure(other, 1, /refused to register plat/);
    expect((await readState(home)).profile!.client.clientId).toBe(JSON.parse(before.profile!).client.clientId);
    expect(await expectConsistent(home)).toBe('logged-in');
  });
});

describe('token responses', () => {
  it.each<[TokenResponseKnob, RegExp]>([
    ['no-access-token', /While exchanging the sign-in code for tokens, the server broke the protocol \(the response body "access_token" property must be a string\)/],
    ['token-type-mac', /not a Bearer token|only supports Bearer/],
    ['negative-expires-in', /"expires_in" property must be a non-negative number/],
  ])('code exchange answered with %s: exit 1 after consent, nothing stored, and the session the server may hold is named', async (knob, message) => {
    platform.knobs.tokenResponse = knob;
    const result = await login();
    expectFailure(result, 1, message);
    // The code is spent and the server issued tokens (a refresh token among them) that plat never stored.
    expect(result.stderr).toMatch(/The server may now hold a session for plat that plat could not store, and so cannot revoke/);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    await expectNoSession();
  });

  it('without token_type (as OpenAuth answers): read as Bearer at the code exchange and at refresh, said under --verbose only', async () => {
    platform.knobs.tokenResponse = 'no-token-type';
    const untyped = /no token_type \(RFC 6749 §5\.1 requires one\); plat reads it as Bearer/;
    const quiet = await login(['--scope', 'courses:read']);
    expectSuccess(quiet);
    expect(quiet.stderr).not.toMatch(untyped);
    const loud = await login(['--scope', 'courses:read', '--verbose']);
    expectSuccess(loud);
    expect(loud.stderr).toMatch(untyped);
    expect((await readState(home)).session!.tokenType).toBe('Bearer');
    const before = (await readState(home)).session!.accessToken;
    const refresh = await home.run(['refresh', '--verbose']);
    expectSuccess(refresh);
    expect(refresh.stderr).toMatch(untyped);
    expect((await readState(home)).session!.accessToken).not.toBe(before);
    const call = await home.run(['call', 'GET', '/api/courses']);
    expectSuccess(call);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('without expires_in: signed in with an unknown expiry, never refreshed before use', async () => {
    platform.knobs.tokenResponse = 'no-expires-in';
    const result = await login(['--scope', 'courses:read']);
    expectSuccess(result);
    expect(result.stdout).toMatch(/Token unknown \(the server did not say\)/);
    expect((await readState(home)).session!.expiresAt).toBeUndefined();
    const call = await home.run(['call', 'GET', '/api/courses']);
    expectSuccess(call);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
    const status = JSON.parse((await home.run(['status', '--json'])).stdout);
    expect(status.profiles[0]).toMatchObject({ loggedIn: true, expiresAt: null });
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('with expires_in as a numeric string: taken as the number (lenient, as oauth4webapi is)', async () => {
    platform.knobs.tokenResponse = 'string-expires-in';
    expectSuccess(await login());
    const session = (await readState(home)).session!;
    expect(session.expiresAt - session.obtainedAt).toBe(3_600_000);
  });

  it.each<[string, Parameters<Platform['override']>[1], number, RegExp]>([
    ['an HTML page', (_q, s) => (s.writeHead(200, { 'content-type': 'text/html' }), s.end('<html>'), true), 1, /did not answer with JSON \(it sent text\/html\)/],
    ['HTTP 500 without a body', (_q, s) => (s.writeHead(500), s.end(), true), 1, /unexpected HTTP 500/],
    ['invalid_grant', json(400, { error: 'invalid_grant', error_description: 'code expired' }), 4, /did not accept the sign-in code \(invalid_grant\)\. Run plat login again/],
    ['a redirect to another origin', (_q, s) => (s.writeHead(307, { location: 'http://127.0.0.2:9/steal' }), s.end(), true), 1, /unexpected HTTP 307/],
  ])('code exchange answered with %s: the contract exit code, nothing stored', async (_what, handler, code, message) => {
    platform.override('/api/oauth/token', handler);
    const result = await login();
    expectFailure(result, code, message);
    // Only an answer of 200 may have issued tokens: an error status spent nothing the server holds for plat.
    if (!/HTML/.test(_what)) expect(result.stderr).not.toMatch(/may now hold a session/);
    await expectNoSession();
  });
});

describe('refresh responses (the session exists and must survive what the server gets wrong)', () => {
  it.each<[string, Parameters<Platform['override']>[1], RegExp]>([
    ['no access_token', json(200, { token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-from-a-broken-server-0000' }), /"access_token" property must be a string/],
    ['token_type mac', json(200, { access_token: 'at-from-a-broken-server-0000', token_type: 'mac', expires_in: 3600 }), /not a Bearer token|only supports Bearer/],
    ['a negative expires_in', json(200, { access_token: 'at-from-a-broken-server-0000', token_type: 'Bearer', expires_in: -5 }), /"expires_in" property must be a non-negative number/],
    ['an HTML page', (_q, s) => (s.writeHead(200, { 'content-type': 'text/html' }), s.end('<html>'), true), /did not answer with JSON \(it sent text\/html\)/],
    ['HTTP 503', (_q, s) => (s.writeHead(503), s.end(), true), /unexpected HTTP 503/],
    ['an OAuth error other than invalid_grant', json(400, { error: 'temporarily_unavailable', error_description: 'try later' }), /refused refreshing the access token \(temporarily_unavailable: try later\)/],
  ])('%s: exit 1, the stored session is untouched, and refresh works once the server is fixed', async (_what, handler, message) => {
    await signIn(home, platform);
    const before = await sessionBytes(home);
    platform.override('/api/oauth/token', handler);
    expectFailure(await home.run(['refresh']), 1, message);
    expect(await sessionBytes(home)).toEqual(before);
    platform.clearOverrides();
    expectSuccess(await home.run(['refresh']));
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('invalid_grant ends the session cleanly (exit 4), keeping the registration for the next login', async () => {
    await signIn(home, platform);
    const clientId = (await readState(home)).profile!.client.clientId;
    platform.override('/api/oauth/token', json(400, { error: 'invalid_grant' }));
    expectFailure(await home.run(['refresh']), 4, /The session has expired or was revoked \(the refresh token was rejected\)\. Run plat login/);
    expect(await expectConsistent(home)).toBe('logged-out');
    expect((await readState(home)).profile!.client.clientId).toBe(clientId);
  });

  it('invalid_client ends the session and drops the registration the server forgot (exit 4)', async () => {
    await signIn(home, platform);
    platform.override('/api/oauth/token', json(401, { error: 'invalid_client', error_description: 'client is unknown' }));
    expectFailure(await home.run(['refresh']), 4, /no longer recognises plat's registration \(invalid_client: client is unknown\)/);
    expect(await expectConsistent(home)).toBe('logged-out');
    expect((await readState(home)).profile!.client).toBeUndefined();
  });

  it('a server that rotates the refresh token and then answers wrongly: plat keeps what it had, and the next refresh says the session is over', async () => {
    await signIn(home, platform);
    const before = await sessionBytes(home);
    platform.knobs.tokenResponse = 'no-access-token';
    expectFailure(await home.run(['refresh']), 1, /"access_token" property must be a string/);
    expect(await sessionBytes(home)).toEqual(before);
    platform.knobs.tokenResponse = 'ok';
    // The server spent the refresh token plat still holds: it refuses it (and revokes the grant), plat says so.
    expectFailure(await home.run(['refresh']), 4, /run plat login/i);
    expect(platform.stats.count('refresh-replay')).toBe(1);
    expect(await expectConsistent(home)).toBe('logged-out');
  });
});

describe('the callback', () => {
  const withParams = (edit: (url: URL) => void) => async (callback: string) => {
    const url = new URL(callback);
    edit(url);
    await fetch(url).then((r) => r.text());
  };

  it.each<[string, boolean, (url: URL) => void, RegExp]>([
    ['iss missing though the server advertises it', true, (u) => u.searchParams.delete('iss'), /lacks the "iss" parameter that the server announced/],
    ['iss naming another server', true, (u) => u.searchParams.set('iss', 'https://evil.example.test'), /iss mismatch/],
    ['iss naming another server that does not advertise iss', false, (u) => u.searchParams.set('iss', 'https://evil.example.test'), /iss mismatch/],
    ['an error from the server (server_error)', true, (u) => (u.searchParams.delete('code'), u.searchParams.set('error', 'server_error'), u.searchParams.set('error_description', 'db down')), /returned an error instead of a code: server_error \(db down\)/],
    ['access_denied', true, (u) => (u.searchParams.delete('code'), u.searchParams.set('error', 'access_denied')), /Access was denied in the browser/],
  ])('%s: exit 4, the code is never exchanged, nothing stored', async (_what, advertised, edit, message) => {
    platform.knobs.issParameterSupported = advertised;
    const result = await login([], withParams(edit));
    expectFailure(result, 4, message);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
    await expectNoSession();
  });

  it('iss missing from a server that does not advertise it: accepted', async () => {
    platform.knobs.issParameterSupported = false;
    expectSuccess(await login([], withParams((u) => u.searchParams.delete('iss'))));
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('a callback without a code: exit 1 or 4 with a sentence, nothing exchanged or stored', async () => {
    const result = await login([], withParams((u) => u.searchParams.delete('code')));
    expect([1, 4]).toContain(result.code);
    expectFailure(result, result.code!, /code/);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
    await expectNoSession();
  });

  it('a valid code from another authorization request (another PKCE challenge): the server refuses it, exit 4', async () => {
    // The same client and redirect address, but a challenge plat's verifier does not answer: PKCE must fail.
    const result = await login([], async (callback, authorizeUrl) => {
      const foreignRequest = new URL(authorizeUrl);
      foreignRequest.searchParams.set('code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
      foreignRequest.searchParams.set('state', 'foreign-state');
      const foreign = new URL(await platform.approve(foreignRequest.href));
      const mine = new URL(callback);
      mine.searchParams.set('code', foreign.searchParams.get('code')!);
      await fetch(mine).then((r) => r.text());
    });
    expectFailure(result, 4, /did not accept the sign-in code \(invalid_grant\)/);
    await expectNoSession();
  });

  it('forged callbacks (no state, empty, another value, a state with extra characters) are refused and the login goes on', async () => {
    const statuses: number[] = [];
    const result = await login([], async (callback) => {
      const real = new URL(callback);
      const forge = async (edit: (u: URL) => void) => {
        const forged = new URL(real);
        edit(forged);
        const response = await fetch(forged);
        statuses.push(response.status);
        await response.text();
      };
      await forge((u) => u.searchParams.delete('state'));
      await forge((u) => u.searchParams.set('state', ''));
      await forge((u) => u.searchParams.set('state', 'forged'));
      await forge((u) => u.searchParams.set('state', `${real.searchParams.get('state')}x`));
      await forge((u) => (u.searchParams.set('state', 'forged'), u.searchParams.set('error', 'access_denied'), u.searchParams.delete('code')));
      await fetch(real).then((r) => r.text());
    });
    expect(statuses).toEqual([400, 400, 400, 400, 400]);
    expectSuccess(result);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('a second callback after the first is refused (409 or closed); the code is exchanged once', async () => {
    let second: number | string = 'not tried';
    const result = await login([], async (callback) => {
      const first = await fetch(callback);
      expect(first.status).toBe(200);
      await first.text();
      second = await fetch(callback).then(
        async (r) => (await r.text(), r.status),
        (e: Error & { cause?: { code?: string } }) => e.cause?.code ?? e.message,
      );
    });
    expectSuccess(result);
    expect([409, 'ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET']).toContain(second);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    const port = redirectPort(AUTHORIZE_URL.exec(result.stderr)![1]!);
    await expect(fetch(`http://127.0.0.1:${port}/callback`)).rejects.toThrow();
  });
});

describe('a challenge only on POST (an MCP-style endpoint whose document is at a custom address)', () => {
  const mcp = () => `${platform.baseUrl}/mcp`;
  const loginAt = (args: string[]) => {
    const approval = approving(platform, { firstOnly: true });
    return home.run(['login', '--no-browser', '--base-url', mcp(), ...args], { onStderr: approval.onStderr });
  };

  it('plat call meets the 401, names the login for that base URL and remembers the document, and that login works', async () => {
    platform.knobs.postOnlyMcp = true;
    // (Discovery alone now finds the origin's own documents for a base URL with a path; the document the 401 names,
    // for this very API, goes first once remembered.)
    const call = await home.run(['call', 'POST', mcp(), '--base-url', mcp(), '-f', 'method=ping']);
    expectFailure(call, 4, new RegExp(`POST /mcp needs you to be signed in \\(HTTP 401\\); the API names its sign-in metadata at ${platform.baseUrl}/mcp-resource\\.json, which plat will use\\. Run: plat login --base-url ${mcp()}`), { stdout: true });

    // plat batch's line says the same (the address is remembered by the one request path every adapter shares).
    const batch = await home.run(['batch', '-', '--base-url', mcp()], { stdin: `${JSON.stringify({ method: 'POST', path: '/', body: { method: 'ping' } })}\n` });
    expect(batch.code).toBe(1);
    expect(JSON.parse(batch.stdout.trim())).toMatchObject({ status: 401, ok: false, error: expect.stringMatching(/sign-in metadata at .*mcp-resource\.json.*Run: plat login --base-url/) });

    const login = await loginAt(['--scope', 'courses:read']);
    expectSuccess(login);
    expect(platform.stats.count('GET /mcp-resource.json')).toBeGreaterThanOrEqual(1);
    expect((await readState(home)).profile).toMatchObject({ baseUrl: mcp(), issuer: platform.issuer, resource: mcp() });
    const signedIn = await home.run(['call', 'POST', mcp(), '-f', 'method=ping']);
    expectSuccess(signedIn);
    expect(JSON.parse(signedIn.stdout).result.user).toBe('user-ada');
  });

  it('a URL given alone (no profile, no --base-url): the 401 names plat login --base-url <that URL>, the document is remembered for it, and that login and the call again work', async () => {
    platform.knobs.postOnlyMcp = true;
    const call = await home.run(['call', 'POST', mcp(), '-f', 'method=ping']);
    expectFailure(call, 4, new RegExp(`POST /mcp needs you to be signed in \\(HTTP 401\\); the API names its sign-in metadata at ${platform.baseUrl}/mcp-resource\\.json, which plat will use\\. Run: plat login --base-url ${mcp()}$`, 'm'), { stdout: true });
    expect(await listFiles(`${home.configDir}/resource-metadata`)).toHaveLength(1);

    const login = await loginAt(['--scope', 'courses:read']);
    expectSuccess(login);
    expect(platform.stats.count('GET /mcp-resource.json')).toBeGreaterThanOrEqual(1);
    expect((await readState(home)).profile).toMatchObject({ baseUrl: mcp(), issuer: platform.issuer, resource: mcp() });
    const again = await home.run(['call', 'POST', mcp(), '-f', 'method=ping']);
    expectSuccess(again);
    expect(JSON.parse(again.stdout).result.user).toBe('user-ada');
  });

  it('a URL given alone whose 401 names a document on another origin (another port of the same host): the plain sentence, nothing remembered', async () => {
    const otherPort = platform.baseUrl.replace(/:\d+$/, ':9');
    platform.override('/api/private', json(401, { error: 'unauthorized' }, { 'www-authenticate': `Bearer resource_metadata="${otherPort}/prm.json"` }));
    const call = await home.run(['call', 'GET', `${platform.baseUrl}/api/private`]);
    expectFailure(call, 4, /GET \/api\/private needs you to be signed in \(HTTP 401\)\. Run: plat login/, { stdout: true });
    expect(call.stderr).not.toContain('prm.json');
    expect(await listFiles(`${home.configDir}/resource-metadata`).catch(() => [])).toEqual([]);
  });

  it('a 401 naming the well-known address (where discovery looks anyway) or another origin (another host, another port of the same host): the plain sentence, nothing remembered', async () => {
    for (const named of [`${platform.baseUrl}/.well-known/oauth-protected-resource`, 'http://127.0.0.2:9/prm.json', `${platform.baseUrl.replace(/:\d+$/, ':9')}/prm.json`]) {
      platform.override('/api/private', json(401, { error: 'unauthorized' }, { 'www-authenticate': `Bearer resource_metadata="${named}"` }));
      const call = await home.run(['call', 'GET', '/api/private', '--base-url', platform.baseUrl]);
      expectFailure(call, 4, /GET \/api\/private needs you to be signed in \(HTTP 401\)\. Run: plat login/, { stdout: true });
      expect(await listFiles(`${home.configDir}/resource-metadata`).catch(() => [])).toEqual([]);
      platform.clearOverrides();
    }
  });

  it('plat login --resource-metadata gives the address by hand; one that is not http(s) is a usage error', async () => {
    platform.knobs.postOnlyMcp = true;
    expectFailure(await home.run(['login', '--base-url', mcp(), '--resource-metadata', 'ftp://example.test/x']), 2, /--resource-metadata must be the https:\/\/ address/);
    const login = await loginAt(['--scope', 'courses:read', '--resource-metadata', `${platform.baseUrl}/mcp-resource.json`]);
    expectSuccess(login);
    expect((await readState(home)).profile).toMatchObject({ baseUrl: mcp(), resource: mcp() });
    // Remembered: a later discovery of this base URL (the cache dropped) still finds the same authorization server.
    const discover = await home.run(['discover', '--base-url', mcp(), '--refresh', '--json']);
    expect(discover.code, discover.stderr).toBe(0);
    expect(JSON.parse(discover.stdout).issuer).toBe(platform.issuer);
  });
});
