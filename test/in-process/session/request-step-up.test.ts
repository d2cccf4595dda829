/**
 * The one step-up path (session/request.ts, `client.send(request, { stepUp })`): who is offered it and who never
 * is, in-process on a context that looks like a person at a terminal (stdin and stderr TTYs, prompts allowed, CI
 * unset), so that each "no question" below is the rule and not the lack of a terminal. A "yes" signs in through
 * the browser: that half is test/ui/terminal.test.ts's, on a real pseudo-terminal.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch, type BatchResult } from '../../../src/batch/index.js';
import { openClient, responseFailure, type ApiRequest } from '../../../src/session/index.js';
import { signIn } from '../../helpers/consent.js';
import { useTestContexts, type TestContext } from '../../helpers/context.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

const REFUSAL = '{"error":"insufficient_scope"}';
const CHALLENGE = 'Bearer error="insufficient_scope", scope="analytics:read"';

/** Another origin that refuses everything for lack of analytics:read, as the platform's /api/wide does below. */
let elsewhere: { server: Server; url: string; hits: number };

beforeAll(async () => {
  const server = createServer((req, res) => {
    elsewhere.hits++;
    req.resume();
    res.writeHead(403, { 'content-type': 'application/json', 'www-authenticate': CHALLENGE }).end(REFUSAL);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  elsewhere = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: 0 };
});
afterAll(async () => {
  await new Promise((resolve) => elsewhere?.server.close(resolve));
});

/** Signed in with courses:read only; /api/wide answers 403 insufficient_scope naming analytics:read. */
async function refusedForAnalytics(): Promise<void> {
  await signIn(home, platform, ['--scope', 'courses:read']);
  platform.override('/api/wide', (req, res) => {
    req.resume();
    res.writeHead(403, { 'content-type': 'application/json', 'www-authenticate': CHALLENGE }).end(REFUSAL);
    return true;
  });
  platform.stats.reset();
}

/** A context where plat may ask: both ends a terminal, prompts on, no CI; `answer` is what the person types. */
function atTerminal(answer: string): TestContext {
  return open({ env: { CI: undefined, PLAT_NO_PROMPT: undefined }, globals: { prompt: true }, stdin: answer, terminal: true });
}

const asked = (t: TestContext) => /\[y\/N\]/.test(t.stderr());

async function text(body: AsyncIterable<Buffer | string>): Promise<string> {
  let all = '';
  for await (const chunk of body) all += chunk.toString();
  return all;
}

describe('send(request, { stepUp }) at a terminal', () => {
  it('asks about the scope the refusal names; a "no" returns the refusal with its body whole, sent once', async () => {
    await refusedForAnalytics();
    const t = atTerminal('n\n');
    const client = await openClient(t.ctx, { auth: 'auto' });
    const request: ApiRequest = { method: 'GET', url: new URL('/api/wide', platform.baseUrl) };
    const response = await client.send(request, { stepUp: {} });
    expect(asked(t), t.stderr()).toBe(true);
    expect(t.stderr()).toMatch(/This call needs analytics:read\. Sign in again adding it\? \[y\/N\]/);
    expect(response.status).toBe(403);
    expect(await text(response.body)).toBe(REFUSAL);
    expect(platform.stats.count('GET /api/wide')).toBe(1);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
  });

  it('a body that cannot be sent again (stdin) is not offered one: the refusal stands, no question', async () => {
    await refusedForAnalytics();
    const t = atTerminal('n\n');
    const client = await openClient(t.ctx, { auth: 'auto' });
    const request: ApiRequest = { method: 'POST', url: new URL('/api/wide', platform.baseUrl), body: () => '{}', replayable: false };
    const response = await client.send(request, { stepUp: {} });
    expect(response.status).toBe(403);
    expect(asked(t), t.stderr()).toBe(false);
    expect(await text(response.body)).toBe(REFUSAL);
    expect(platform.stats.count('POST /api/wide')).toBe(1);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
  });

  it('a 403 from another origin (sent no token) is not offered one, and its error names no plat login', async () => {
    await refusedForAnalytics();
    const t = atTerminal('n\n');
    const client = await openClient(t.ctx, { auth: 'auto' });
    const request: ApiRequest = { method: 'GET', url: new URL('/anything', elsewhere.url) };
    const hits = elsewhere.hits;
    const response = await client.send(request, { stepUp: {} });
    expect(response.status).toBe(403);
    expect(elsewhere.hits).toBe(hits + 1);
    expect(asked(t), t.stderr()).toBe(false);
    const failure = responseFailure(t.ctx, request, response);
    expect(failure?.exitCode).toBe(1);
    expect(failure?.message).not.toMatch(/--add-scope/);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
  });

  it('plat batch never asks: the refusal is the line\'s result', async () => {
    await refusedForAnalytics();
    const t = atTerminal('n\n');
    const client = await openClient(t.ctx, { auth: 'auto' });
    const run = await startBatch(t.ctx, client, [{ line: 1, id: 1, request: { method: 'GET', url: new URL('/api/wide', platform.baseUrl) } }], { concurrency: 1 });
    const results: BatchResult[] = [];
    for await (const result of run.results) results.push(result);
    expect(results).toMatchObject([{ id: 1, status: 403, ok: false }]);
    expect(asked(t), t.stderr()).toBe(false);
    expect(platform.stats.count('GET /api/wide')).toBe(1);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
  });
});
