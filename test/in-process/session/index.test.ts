/**
 * The session's front door (src/session/index.ts) keeps its promise for every verb that yields a token or sends
 * one: PLAT_TOKEN wins over the stored session, and a stored session's token goes only to the platform (origin) it
 * was issued for. Run in-process (testContext) over a session a real `plat login` stored on the reference platform,
 * with a second server beside it that records every Authorization header it is sent. Among the callers: the
 * library's fetch, and `plat status --check`, which read the stored session by hand (loadSession) before the door.
 * Last, the door works the target (profile, platform, session) out once per command: counted in what it reads.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli.js';
import { run as call } from '../../../src/commands/call/call.js';
import { run as status } from '../../../src/commands/auth/status.js';
import { libraryFetch } from '../../../src/library/fetch.js';
import { accessToken, apiUrl, currentProfile, describeSession, heldScopes, identify, openClient, pageItems, refreshNow, responseFailure } from '../../../src/session/index.js';
import { signIn } from '../../helpers/consent.js';
import { expectPlatError, useTestContexts, type TestContext } from '../../helpers/context.js';
import { useHome, usePlatform } from '../../helpers/platform.js';
import { readStoredSession } from '../../helpers/state.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

/** Another platform: answers every request with an empty list, and keeps the Authorization header of each. */
let elsewhere: { server: Server; url: string; authorizations: Array<string | undefined> };

beforeAll(async () => {
  const authorizations: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  elsewhere = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, authorizations };
});
afterAll(async () => {
  await new Promise((resolve) => elsewhere?.server.close(resolve));
});

async function signedIn(): Promise<{ accessToken: string }> {
  await signIn(home, platform, ['--scope', 'courses:read']);
  elsewhere.authorizations.length = 0;
  platform.stats.reset();
  return readStoredSession(home) as Promise<{ accessToken: string }>;
}

async function text(body: AsyncIterable<Buffer | string>): Promise<string> {
  let all = '';
  for await (const chunk of body) all += chunk.toString();
  return all;
}

/** A token the platform never issued: a request that carries it is refused, one that carries the session's is not. */
const NOT_ISSUED = 'token-from-the-environment-the-platform-never-issued';

describe('PLAT_TOKEN wins over the stored session, in every verb that yields or sends a token', () => {
  const withEnvToken = (): TestContext => open({ env: { PLAT_TOKEN: NOT_ISSUED }, globals: { json: true } });

  it('accessToken hands out PLAT_TOKEN, and heldScopes names none', async () => {
    await signedIn();
    const t = withEnvToken();
    expect(await accessToken(t.ctx)).toMatchObject({ kind: 'env', token: NOT_ISSUED });
    expect(heldScopes(t.ctx, await currentProfile(t.ctx), undefined)).toEqual({ session: false, scopes: [] });
  });

  it("openClient sends PLAT_TOKEN (the platform refuses it), not the session's, and refreshes nothing", async () => {
    await signedIn();
    const t = withEnvToken();
    const client = await openClient(t.ctx, { auth: 'auto' });
    const request = { method: 'GET', url: apiUrl('/api/courses', client.baseUrl, 'log in'), headers: { accept: 'application/json' } };
    const response = await client.send(request);
    response.body.resume();
    expect(response.status).toBe(401);
    expect(response.token).toMatchObject({ kind: 'env', token: NOT_ISSUED });
    expect(responseFailure(t.ctx, request, response)?.message).toMatch(/^The server rejected PLAT_TOKEN \(HTTP 401\)/);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });

  it('pageItems, the library\'s fetch and identify use PLAT_TOKEN too', async () => {
    await signedIn();
    const t = withEnvToken();
    const client = await openClient(t.ctx, { auth: 'required' });
    const first = { method: 'GET', url: apiUrl('/api/courses', client.baseUrl, 'log in'), headers: { accept: 'application/json' } };
    await expectPlatError(t, async () => {
      for await (const _ of pageItems(t.ctx, client, first)) expect.unreachable('a page of a refused request');
    }, 4, /PLAT_TOKEN \(HTTP 401\)/);
    await expectPlatError(t, () => libraryFetch(t.ctx, '/api/courses'), 4, /^The server rejected PLAT_TOKEN \(HTTP 401\)/);
    await expectPlatError(t, () => identify(t.ctx), 4, /^The server rejected PLAT_TOKEN \(HTTP 401 from its UserInfo endpoint\)/);
  });

  it('refreshNow refuses: plat cannot refresh a token it was handed', async () => {
    await signedIn();
    const t = withEnvToken();
    await expectPlatError(t, () => refreshNow(t.ctx), 2, /^PLAT_TOKEN is set: that token cannot be refreshed by plat/);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });

  it('plat status --check shows the stored session but does not check it with its token (describeSession)', async () => {
    const stored = await signedIn();
    const t = withEnvToken();
    const described = await describeSession(t.ctx, (await (await t.ctx.profiles()).load('default'))!);
    expect(described).toMatchObject({ scopes: expect.arrayContaining(['courses:read']), tokenStore: expect.any(String) });
    expect(JSON.stringify(described)).not.toContain(stored.accessToken);
    await expectPlatError(t, () => described!.check(), 1, /^PLAT_TOKEN is set, so the stored session was not checked$/);

    await expectPlatError(t, () => status(t.ctx, { check: true }), 4, /refused the token of profile default/, { stdout: true });
    const [listed] = JSON.parse(t.stdout()).profiles;
    expect(listed).toMatchObject({ profile: 'default', loggedIn: true, works: false, problem: 'PLAT_TOKEN is set, so the stored session was not checked' });
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });
});

describe("a stored session's token goes only to its own platform, in every verb that yields or sends one", () => {
  /** --base-url names another platform than the one the profile is signed in to. */
  const namingElsewhere = (): TestContext => open({ globals: { baseUrl: elsewhere.url, json: true } });
  const notThere = () => new RegExp(`^Profile default is signed in to ${platform.baseUrl.replace(/[.:/]/g, '\\$&')}, not to ${elsewhere.url.replace(/[.:/]/g, '\\$&')}`);

  it('accessToken, identify, refreshNow and a client that needs the session refuse, exit 4; heldScopes names none', async () => {
    await signedIn();
    const t = namingElsewhere();
    await expectPlatError(t, () => accessToken(t.ctx), 4, notThere());
    await expectPlatError(t, () => identify(t.ctx), 4, notThere());
    await expectPlatError(t, () => refreshNow(t.ctx), 4, notThere());
    await expectPlatError(t, () => openClient(t.ctx, { auth: 'required' }), 4, notThere());
    await expectPlatError(t, () => libraryFetch(t.ctx, '/api/courses'), 4, notThere());
    expect(heldScopes(t.ctx, await currentProfile(t.ctx), elsewhere.url)).toEqual({ session: false, scopes: [] });
    expect(elsewhere.authorizations).toEqual([]);
    expect(platform.stats.count('token:refresh_token')).toBe(0);
  });

  it('openClient (auto) calls the other platform anonymously, saying why', async () => {
    await signedIn();
    const t = namingElsewhere();
    const client = await openClient(t.ctx, { auth: 'auto' });
    const response = await client.send({ method: 'GET', url: apiUrl('/api/courses', client.baseUrl, 'log in') });
    response.body.resume();
    expect(response.status).toBe(200);
    expect(response.token).toBeUndefined();
    expect(elsewhere.authorizations).toEqual([undefined]);
    expect(t.stderr()).toContain(`Profile default is signed in to ${platform.baseUrl}, not ${elsewhere.url}: calling ${elsewhere.url} anonymously.`);
  });

  it("a session bound to its own platform sends no token to a URL on another origin (openClient, pageItems)", async () => {
    await signedIn();
    const t = open();
    const client = await openClient(t.ctx, { auth: 'required' });
    const away = { method: 'GET', url: apiUrl(`${elsewhere.url}/api/courses`, client.baseUrl, 'log in'), headers: { accept: 'application/json' } };
    const response = await client.send(away);
    response.body.resume();
    expect(response.token).toBeUndefined();
    for await (const _ of pageItems(t.ctx, client, away)) expect.unreachable('the other platform lists nothing');
    expect(elsewhere.authorizations).toEqual([undefined, undefined]);
    expect(t.stderr()).toContain(`${elsewhere.url} is not the platform's origin: calling it without your token.`);
    // The same client on its own platform does send the session's token.
    const own = await client.send({ method: 'GET', url: apiUrl('/api/courses', client.baseUrl, 'log in') });
    expect(JSON.parse(await text(own.body))).toMatchObject({ anonymous: false });
    expect(own.token?.kind).toBe('session');
  });

  it('plat status --check lists the session but does not send its token to the other platform (describeSession)', async () => {
    await signedIn();
    const t = namingElsewhere();
    await expectPlatError(t, () => status(t.ctx, { check: true }), 4, /refused the token of profile default/, { stdout: true });
    const [listed] = JSON.parse(t.stdout()).profiles;
    expect(listed).toMatchObject({ profile: 'default', loggedIn: true, baseUrl: platform.baseUrl, works: false });
    expect(listed.problem).toMatch(notThere());
    expect(elsewhere.authorizations).toEqual([]);
  });
});

describe('the sender holds the header rule itself, whatever a caller built', () => {
  it('a header the rule refuses, in any spelling, is a UsageError before anything is sent; others go with the rule\'s names', async () => {
    await signedIn();
    const t = open();
    const client = await openClient(t.ctx, { auth: 'required' });
    const url = apiUrl('/api/echo', client.baseUrl, 'log in');
    const refused: Array<Record<string, string>> = [{ 'Authorization ': 'Bearer someone-else' }, { HOST: 'tenant-b.example' }, { ' transfer-encoding': 'chunked' }, { 'Proxy-Authorization': 'Basic eA==' }];
    for (const headers of refused) {
      await expectPlatError(t, () => client.send({ method: 'GET', url, headers }), 2, /^GET \/api\/echo was not sent: /, { what: Object.keys(headers)[0] });
    }
    expect(platform.stats.events.filter((e) => e.path.startsWith('/api/echo'))).toEqual([]);
    // Toward another origin the person's own credential goes (the session's does not); Host still does not.
    const away = await client.send({ method: 'GET', url: apiUrl(`${elsewhere.url}/x`, client.baseUrl, 'log in'), headers: { Authorization: 'Bearer their-own' } });
    away.body.resume();
    expect(elsewhere.authorizations).toEqual(['Bearer their-own']);
    await expectPlatError(t, () => client.send({ method: 'GET', url: apiUrl(`${elsewhere.url}/x`, client.baseUrl, 'log in'), headers: { host: 'tenant-b.example' } }), 2, /was not sent: Host chooses/);
    // A name in another case or with spaces goes as the rule spells it: one x-trace, not two.
    const echoed = await client.send({ method: 'GET', url, headers: { 'X-Trace ': 'a', 'x-trace': 'b' } });
    expect(JSON.parse(await text(echoed.body)).headers['x-trace']).toBe('a, b');
  });
});

describe('heldScopes: what plat scopes and plat scopes plan count as held, from the profile', () => {
  it("names the session's scopes on its own platform, none on another, none with PLAT_TOKEN", async () => {
    await signedIn();
    const here = open();
    const profile = await currentProfile(here.ctx);
    expect(heldScopes(here.ctx, profile, platform.baseUrl)).toEqual({ session: true, scopes: expect.arrayContaining(['courses:read']) });
    expect(heldScopes(here.ctx, profile, undefined).session).toBe(true); // no platform named: the profile's own
    expect(heldScopes(here.ctx, profile, elsewhere.url)).toEqual({ session: false, scopes: [] });
    const withEnvToken = open({ env: { PLAT_TOKEN: NOT_ISSUED } });
    expect(heldScopes(withEnvToken.ctx, profile, platform.baseUrl)).toEqual({ session: false, scopes: [] });
  });
});

describe('the target (profile, platform, session) is worked out once per command', () => {
  /** Counts what the invocation reads to work it out: profile files, and the token store's sessions. */
  async function counted(t: TestContext): Promise<{ profileLoads: number; storeReads: number }> {
    const counts = { profileLoads: 0, storeReads: 0 };
    const profiles = await t.ctx.profiles();
    const load = profiles.load.bind(profiles);
    profiles.load = (name) => {
      counts.profileLoads++;
      return load(name);
    };
    const tokenStore = t.ctx.tokenStore;
    Object.assign(t.ctx, {
      tokenStore: async (...args: Parameters<typeof tokenStore>) => {
        const store = await tokenStore(...args);
        const get = store.get.bind(store);
        store.get = (name) => {
          counts.storeReads++;
          return get(name);
        };
        return store;
      },
    });
    return counts;
  }

  it('plat call reads the profile once and the stored session once', async () => {
    await signedIn();
    const t = open();
    const counts = await counted(t);
    await call(t.ctx, 'GET', '/api/courses', {});
    expect(JSON.parse(t.stdout())).toBeTruthy();
    expect(counts).toEqual({ profileLoads: 1, storeReads: 1 });
  });

  it('plat op reads the profile once, for the API description and the request alike', async () => {
    await signedIn();
    const t = open();
    const counts = await counted(t);
    await buildProgram('0.0.0-test', () => t.ctx).parseAsync(['node', 'plat', 'op', 'listCourses']);
    expect(JSON.parse(t.stdout())).toBeTruthy();
    expect(counts).toEqual({ profileLoads: 1, storeReads: 1 });
  });
});
