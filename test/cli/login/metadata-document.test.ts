/**
 * Client ID Metadata Documents: with a server that advertises `client_id_metadata_document_supported`, the URL
 * given with --client-metadata-url is the client_id and nothing is registered. The document is served from a
 * local http origin, which the reference platform accepts only with its test knob.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectCleanError } from '../../helpers/cli.js';
import { approving, param, signIn } from '../../helpers/consent.js';
import { readProfile, readStoredSession, sessionFiles } from '../../helpers/state.js';
import { apiStatus } from '../../helpers/login.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform({ knobs: { clientIdMetadataDocuments: true, clientIdMetadataDocumentsOverHttp: true } });
const home = useHome();
let documentServer: Server;
let documentUrl: string;
let documentRequests = 0;
let documentBody: (url: string) => Record<string, unknown>;

/** The document `plat help sign-in` tells integrators to publish, as written there, at this test's own URL. */
const documentation = readFileSync(new URL('../../../src/help/topics/sign-in.md', import.meta.url), 'utf8');
const documented = JSON.parse(/## Client ID metadata documents[\s\S]*?```json\n([\s\S]*?)```/.exec(documentation)![1]!) as Record<string, unknown>;
const publishedDocument = (url: string) => ({ ...documented, client_id: url });

beforeAll(async () => {
  documentServer = createServer((req, res) => {
    documentRequests++;
    if (req.url !== '/plat/client.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(documentBody(documentUrl)));
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  documentUrl = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}/plat/client.json`;
});
afterAll(async () => {
  await new Promise((resolve) => documentServer.close(resolve));
});
beforeEach(() => {
  documentBody = publishedDocument;
  documentRequests = 0;
});

describe('--client-metadata-url', () => {
  it('uses the document URL as the client_id: no registration; refresh, a later plain login and logout work', async () => {
    const { result, consent: approval } = await signIn(home, platform, ['--client-metadata-url', documentUrl, '--scope', 'courses:read']);
    expect(param(approval.urls[0]!, 'client_id')).toBe(documentUrl);
    expect(platform.stats.count('register')).toBe(0);
    expect(documentRequests).toBeGreaterThan(0); // the server resolved the client from the document
    expect(result.stdout).toMatch(/Scopes: openid profile email courses:read/);
    expect((await readProfile(home)).client).toMatchObject({ clientId: documentUrl, authMethod: 'none', dynamic: false });

    expect((await home.run(['refresh'])).code).toBe(0);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);

    const again = await signIn(home, platform);
    expect(param(again.consent.urls[0]!, 'client_id')).toBe(documentUrl);
    expect(platform.stats.count('register')).toBe(0);

    const { accessToken } = await readStoredSession(home);
    const logout = await home.run(['logout']);
    expect(logout.stdout).toMatch(/revoked/);
    expect(await apiStatus(platform, accessToken)).toBe(401);
  });

  it('looks at fresh metadata once when the cached copy predates the server\'s support', async () => {
    platform.knobs.clientIdMetadataDocuments = false;
    await signIn(home, platform); // caches metadata without client_id_metadata_document_supported
    platform.knobs.clientIdMetadataDocuments = true;
    platform.stats.reset();
    const { consent: approval } = await signIn(home, platform, ['--client-metadata-url', documentUrl]);
    expect(param(approval.urls[0]!, 'client_id')).toBe(documentUrl);
    expect(platform.stats.count('GET /.well-known/oauth-authorization-server')).toBe(1);
  });

  it('is refused clearly (exit 2) when the server does not advertise support, before anything is opened or fetched', async () => {
    platform.knobs.clientIdMetadataDocuments = false;
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-metadata-url', documentUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not support client ID metadata documents \(its metadata lacks client_id_metadata_document_supported\)/);
    expect(result.stderr).not.toContain('/oauth/authorize');
    expectCleanError(result);
    expect(platform.stats.count('register')).toBe(0);
    expect(documentRequests).toBe(0);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('a document the server will not use (http without the test knob) shows the browser an error; at --timeout plat says what to check', async () => {
    platform.knobs.clientIdMetadataDocumentsOverHttp = false;
    const approval = approving(platform);
    const result = await home.run(
      ['login', '--no-browser', '--base-url', platform.baseUrl, '--client-metadata-url', documentUrl, '--timeout', '2'],
      { onStderr: approval.onStderr },
    );
    expect(approval.errors.join('\n')).toMatch(/consent flow stopped at \/oauth\/authorize with HTTP 400/);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`The server does not accept the client ${documentUrl} with the redirect address`);
    expect(result.stderr).toMatch(/Check that the document is reachable from the server, that its client_id is exactly its URL/);
    expect(documentRequests).toBe(0);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it('a document whose client_id is not its URL is refused by the server', async () => {
    documentBody = (url) => ({ ...publishedDocument(url), client_id: 'https://elsewhere.example/client.json' });
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--client-metadata-url', documentUrl, '--timeout', '2'], {
      onStderr: approving(platform).onStderr,
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`The server does not accept the client ${documentUrl}`);
  });

  it.each([
    ['http://school.example.com/plat/client.json', /http:\/\/ is accepted only for 127\.0\.0\.1/],
    ['https://example.com', /it needs a path/],
    ['https://example.com/', /it needs a path/],
    ['https://example.com/plat/client.json#top', /must not contain a fragment/],
    ['https://user@example.com/plat/client.json', /user name or password/],
    ['https://example.com/plat/../client.json', /\. or \.\. path segments/],
    ['client.json', /not a URL/],
  ])('refuses %s as a usage error', async (url, message) => {
    const result = await home.run(['login', '--base-url', platform.baseUrl, '--client-metadata-url', url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(platform.stats.count('register')).toBe(0);
  });

  it('cannot be combined with --client-id', async () => {
    const result = await home.run(['login', '--base-url', platform.baseUrl, '--client-metadata-url', documentUrl, '--client-id', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/pass one of them/);
  });
});
