/**
 * An https issuer whose metadata names a plain-http endpoint. The reference platform runs over TLS here with a
 * throwaway certificate for 127.0.0.1 (made with openssl, trusted by plat through NODE_EXTRA_CA_CERTS, as a
 * private CA would be), so the issuer really is https. The http endpoints point at a trap on loopback that counts
 * connections: plat must refuse them before sending anything (a code, a verifier, a refresh or access token).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openssl } from '../helpers/components.js';
import { approving, AUTHORIZE_URL, signIn } from '../helpers/consent.js';
import { listFiles, readState } from '../helpers/state.js';
import { expectConsistent, expectFailure, expectSuccess } from './helpers.js';
import { useHome, usePlatform } from '../helpers/platform.js';

let certDir: string;
let certFile: string;
/** A plain TCP listener standing in for an http:// endpoint: it counts connections and answers nothing. */
let trap: Server;
let trapConnections = 0;
let trapUrl: string;

describe.skipIf(openssl.skip)(openssl.title('an https issuer'), () => {
  beforeAll(async () => {
    if (!openssl.available) return;
    certDir = await mkdtemp(path.join(os.tmpdir(), 'plat-tls-'));
    certFile = path.join(certDir, 'cert.pem');
    const keyFile = path.join(certDir, 'key.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=plat test platform', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
    ], { stdio: 'ignore' });
    trap = createServer((socket) => {
      trapConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    trapUrl = `http://127.0.0.1:${(trap.address() as import('node:net').AddressInfo).port}`;
  });
  const platform = usePlatform(async () => {
    openssl.require(); // in CI, a missing openssl fails every case instead of skipping them
    return { tls: { key: await readFile(path.join(certDir, 'key.pem'), 'utf8'), cert: await readFile(certFile, 'utf8') } };
  });
  const home = useHome(() => ({ NODE_EXTRA_CA_CERTS: certFile }));
  afterAll(async () => {
    await new Promise((resolve) => (trap ? trap.close(resolve) : resolve(undefined)));
    if (certDir) await rm(certDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    trapConnections = 0;
  });

  async function login() {
    const approval = approving(platform, { firstOnly: true });
    return home.run(['login', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:read'], { onStderr: approval.onStderr });
  }

  async function expectNoSession() {
    expect(await listFiles(path.join(home.configDir, 'tokens'))).toEqual([]);
    expect((await readState(home)).profile?.loggedIn ?? false).toBe(false);
  }

  it('works end to end over https (the setup is sound)', async () => {
    expect(platform.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expectSuccess(await login());
    expectSuccess(await home.run(['call', 'GET', '/api/courses']));
    expectSuccess(await home.run(['refresh']));
    expect(await expectConsistent(home)).toBe('logged-in');
  });

  it('a 401 of the https API naming an http:// document on its own host and port is not remembered (another origin): the plain sentence', async () => {
    const http = platform.baseUrl.replace(/^https:/, 'http:');
    platform.override('/api/private', (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer resource_metadata="${http}/prm.json"` }).end('{}');
      return true;
    });
    for (const args of [['call', 'GET', '/api/private', '--base-url', platform.baseUrl], ['call', 'GET', `${platform.baseUrl}/api/private`]]) {
      const call = await home.run(args);
      expectFailure(call, 4, /GET \/api\/private needs you to be signed in \(HTTP 401\)\. Run: plat login/, { stdout: true });
      expect(call.stderr).not.toContain('prm.json');
      expect(await listFiles(path.join(home.configDir, 'resource-metadata')).catch(() => [])).toEqual([]);
    }
  });

  it('refuses a certificate it does not trust (exit 3, what to do), storing nothing', async () => {
    const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl], { env: { NODE_EXTRA_CA_CERTS: undefined } });
    expectFailure(result, 3, /Could not establish a trusted TLS connection to https:\/\/127\.0\.0\.1:\d+ .*NODE_EXTRA_CA_CERTS/);
    await expectNoSession();
  });

  it.each([
    ['token_endpoint', 'http://platform.example.test/api/oauth/token'],
    ['token_endpoint', 'loopback'],
  ])('an http:// %s (%s): refused before anything opens; no code or verifier goes there, nothing stored', async (name, where) => {
    platform.knobs.metadataOverrides = { [name]: where === 'loopback' ? `${trapUrl}/api/oauth/token` : where };
    const result = await login();
    expectFailure(result, 1, /token_endpoint is not https:\/\/ .*plat refuses to use it/);
    // refused before anything opened: no registration, no authorization URL, no consent asked for
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(platform.stats.count('register')).toBe(0);
    expect(trapConnections).toBe(0);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
    await expectNoSession();
  });

  it('an http:// registration_endpoint on loopback: refused before registering or opening anything', async () => {
    platform.knobs.metadataOverrides = { registration_endpoint: `${trapUrl}/api/oauth/register` };
    const result = await login();
    expectFailure(result, 1, /registration_endpoint is not https:\/\/|not https/);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(trapConnections).toBe(0);
    await expectNoSession();
  });

  it('an http:// authorization_endpoint on loopback: refused, the browser is never sent there', async () => {
    platform.knobs.metadataOverrides = { authorization_endpoint: `${trapUrl}/oauth/authorize` };
    const result = await login();
    expectFailure(result, 1, /authorization_endpoint is not https:\/\//);
    expect(result.stderr).not.toMatch(AUTHORIZE_URL);
    expect(platform.stats.count('register')).toBe(0);
    await expectNoSession();
  });

  describe('with a session, when the metadata later names http:// endpoints', () => {
    beforeEach(async () => {
      await signIn(home, platform, ['--scope', 'courses:read']);
    });

    it('token_endpoint: plat refresh refuses it (exit 1), the refresh token stays home, the session is kept', async () => {
      platform.knobs.metadataOverrides = { token_endpoint: `${trapUrl}/api/oauth/token` };
      expectSuccess(await home.run(['discover', '--refresh']));
      expectFailure(await home.run(['refresh']), 1, /token_endpoint is not https:\/\//);
      expect(trapConnections).toBe(0);
      expect(await expectConsistent(home)).toBe('logged-in');
    });

    it('userinfo_endpoint: whoami refuses it (exit 1), the access token stays home', async () => {
      // UserInfo is asked only for tokens not bound to the API: signed in again without the RFC 9728 document.
      platform.knobs.protectedResourceMetadata = 'missing';
      expectSuccess(await home.run(['discover', '--refresh']));
      await signIn(home, platform, ['--scope', 'courses:read']);
      platform.knobs.metadataOverrides = { userinfo_endpoint: `${trapUrl}/api/oauth/userinfo` };
      expectSuccess(await home.run(['discover', '--refresh']));
      expectFailure(await home.run(['whoami']), 1, /userinfo_endpoint is not https:\/\//);
      expect(trapConnections).toBe(0);
    });

    it('revocation_endpoint: logout does not send the tokens there, warns, and forgets them', async () => {
      platform.knobs.metadataOverrides = { revocation_endpoint: `${trapUrl}/api/oauth/revoke` };
      expectSuccess(await home.run(['discover', '--refresh']));
      const result = await home.run(['logout']);
      expectSuccess(result);
      expect(result.stderr).toMatch(/warning: Could not revoke .*revocation_endpoint is not https:\/\//);
      expect(trapConnections).toBe(0);
      expect(await expectConsistent(home)).toBe('logged-out');
    });
  });
});
