/**
 * Glewlwyd (Debian's `glewlwyd`, an OpenID Connect provider written in C) for the interop suite: a fresh SQLite
 * database from the package's own install script, one OIDC plugin instance configured in it (code flow with PKCE,
 * rotating one-use refresh tokens, revocation, open dynamic registration), a user, and the server started on
 * 127.0.0.1 with a config file of its own. Its issuer has a path (/api/oidc) and every endpoint a path unlike the
 * spec's.
 *
 * Beside it, a small API on another origin stands for the platform: its RFC 9728 document names Glewlwyd as the
 * authorization server, and its one endpoint accepts a token only when Glewlwyd's own UserInfo accepts it (revoked
 * or unknown tokens fail there) and the token's `scope` claim holds courses:read.
 *
 * With `dpop`, Glewlwyd's DPoP (RFC 9449; its metadata lists dpop_signing_alg_values_supported) is on: it binds the
 * tokens of a token request that carries a proof to the proof's key (cnf.jkt) and checks a proof at UserInfo, and
 * with `nonce` it asks for a DPoP-Nonce at both. Glewlwyd's UserInfo then takes only DPoP with a proof whose htu is
 * UserInfo's own, so the API checks a bound token itself, as a resource server does (RFC 9449 §7): Glewlwyd's
 * signature, the token not revoked in Glewlwyd's database, and the proof (dpop+jwt, signed by the key the token is
 * bound to, htm, htu, iat, ath, a jti not seen before); a bound token sent as Bearer is refused.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, PYTHON, stop } from './servers.js';
import type { Home, RunOptions } from '../helpers/cli.js';
import { scaled } from '../helpers/time.js';

const GLEWLWYD = '/usr/bin/glewlwyd';
export const GLEWLWYD_INSTALL = 'apt-get install -y glewlwyd';
const SCHEMA = '/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3';
const USER = { username: 'linus', password: 'password', name: 'Linus Pauling', email: 'linus@example.test' };
const API_SCOPES = ['courses:read', 'courses:write'];

export function glewlwydInstalled(): boolean {
  try {
    accessSync(GLEWLWYD, constants.X_OK);
    accessSync(SCHEMA, constants.R_OK);
    accessSync(PYTHON, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface Glewlwyd {
  /** The API's origin (plat's --base-url). */
  baseUrl: string;
  /** Glewlwyd's own origin and issuer. */
  origin: string;
  issuer: string;
  authorizationEndpoint: string;
  /** Runs SQL against the server's own database (its records of clients and tokens). */
  query(sql: string): Array<Record<string, unknown>>;
  /** What the server printed (its log, at GLEWLWYD_LOG_LEVEL, default ERROR): for a failing test's message. */
  log(): string;
  close(): Promise<void>;
}

function sqlite(database: string, script: string, query = false): Array<Record<string, unknown>> {
  const program = query
    ? 'import json,sqlite3,sys\nc=sqlite3.connect(sys.argv[1]);c.row_factory=sqlite3.Row\nprint(json.dumps([dict(r) for r in c.execute(sys.stdin.read())]))'
    : 'import sqlite3,sys\nc=sqlite3.connect(sys.argv[1]);c.executescript(sys.stdin.read());c.commit()';
  const result = spawnSync(PYTHON, ['-c', program, database], { input: script, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sqlite: ${result.stderr}`);
  return query ? JSON.parse(result.stdout) : [];
}

const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;

export interface GlewlwydOptions {
  /** Glewlwyd's DPoP on; `nonce`: it requires a DPoP-Nonce at the token endpoint and UserInfo. */
  dpop?: { nonce?: boolean };
}

export async function startGlewlwyd(options: GlewlwydOptions = {}): Promise<Glewlwyd> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'glewlwyd-'));
  const database = path.join(dir, 'glewlwyd.db');
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const issuer = `${origin}/api/oidc`;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  // The package's schema (with its admin user, whose password hash stands for "password"), then this setup.
  const { readFile } = await import('node:fs/promises');
  sqlite(database, await readFile(SCHEMA, 'utf8'));
  const plugin = {
    iss: issuer,
    'jwt-type': 'rsa',
    'jwt-key-size': '256',
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    cert: publicKey.export({ type: 'spki', format: 'pem' }),
    'access-token-duration': 3600,
    'refresh-token-duration': 1209600,
    'code-duration': 600,
    'refresh-token-rolling': true,
    'refresh-token-one-use': 'always',
    'allow-non-oidc': false,
    'auth-type-code-enabled': true,
    'auth-type-token-enabled': false,
    'auth-type-id-token-enabled': false,
    'auth-type-none-enabled': false,
    'auth-type-password-enabled': false,
    'auth-type-client-enabled': false,
    'auth-type-device-enabled': false,
    'auth-type-refresh-enabled': true,
    'allowed-scope': ['openid', 'email', ...API_SCOPES],
    'name-claim': 'mandatory',
    'email-claim': 'mandatory',
    'scope-claim': 'no',
    'pkce-allowed': true,
    'pkce-method-plain-allowed': false,
    'introspection-revocation-allowed': true,
    'introspection-revocation-auth-scope': [],
    'introspection-revocation-allow-target-client': true,
    'register-client-allowed': true,
    'register-client-auth-scope': [],
    'register-client-credentials-scope': [],
    'register-client-management-allowed': false,
    'register-default-properties': {},
    'request-parameter-allow': false,
    'secret-type': 'pairwise',
    'service-documentation': '',
    ...(options.dpop
      ? {
          'oauth-dpop-allowed': true,
          'oauth-dpop-iat-duration': 60,
          'oauth-dpop-nonce-counter': 3,
          'oauth-dpop-nonce-mandatory': Boolean(options.dpop.nonce),
        }
      : {}),
  };
  const scopes = ['email', ...API_SCOPES]
    .map((scope) => `INSERT INTO g_scope (gs_name, gs_display_name, gs_description, gs_password_required, gs_password_max_age) VALUES (${quote(scope)}, ${quote(scope)}, '', 1, 0);`)
    .join('\n');
  const userScopes = ['g_profile', 'openid', 'email', ...API_SCOPES]
    .map(
      (scope) => `INSERT OR IGNORE INTO g_user_scope (gus_name) VALUES (${quote(scope)});
INSERT INTO g_user_scope_user (gu_id, gus_id) VALUES ((SELECT gu_id FROM g_user WHERE gu_username=${quote(USER.username)}), (SELECT gus_id FROM g_user_scope WHERE gus_name=${quote(scope)}));`,
    )
    .join('\n');
  sqlite(
    database,
    `${scopes}
INSERT INTO g_user (gu_username, gu_name, gu_email, gu_enabled) VALUES (${quote(USER.username)}, ${quote(USER.name)}, ${quote(USER.email)}, 1);
INSERT INTO g_user_password (gu_id, guw_password) SELECT (SELECT gu_id FROM g_user WHERE gu_username=${quote(USER.username)}), guw_password FROM g_user_password WHERE gu_id=(SELECT gu_id FROM g_user WHERE gu_username='admin');
${userScopes}
INSERT INTO g_plugin_module_instance (gpmi_module, gpmi_name, gpmi_display_name, gpmi_parameters, gpmi_enabled) VALUES ('oidc', 'oidc', 'OpenID Connect', ${quote(JSON.stringify(plugin))}, 1);`,
  );

  const config = path.join(dir, 'glewlwyd.conf');
  await writeFile(
    config,
    `port=${port}
bind_address="127.0.0.1"
external_url="${origin}"
login_url="${origin}/login.html"
api_prefix="api"
allow_origin="*"
log_mode="console"
log_level="${process.env.GLEWLWYD_LOG_LEVEL ?? 'ERROR'}"
cookie_secure=0
cookie_same_site="empty"
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=false
login_api_enabled=true
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
use_secure_connection=false
secure_connection_key_file="${path.join(dir, 'unused.key')}"
secure_connection_pem_file="${path.join(dir, 'unused.pem')}"
secure_connection_ca_file="${path.join(dir, 'unused.crt')}"
hash_algorithm="SHA512"
database = { type = "sqlite3"; path = "${database}"; };
`,
  );

  const child = spawn(GLEWLWYD, [`--config-file=${config}`], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  try {
    await waitUntilServing(`${issuer}/.well-known/openid-configuration`, child, () => output);
  } catch (error) {
    await stop(child);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  const api = await startApi(issuer, options.dpop ? { publicKey, revoked: (jti) => sqlite(database, `SELECT gpoa_enabled AS enabled FROM gpo_access_token WHERE gpoa_jti = ${quote(jti)}`, true)[0]?.enabled !== 1 } : undefined);
  return {
    baseUrl: api.url,
    origin,
    issuer,
    authorizationEndpoint: `${issuer}/auth`,
    query: (sql) => sqlite(database, sql, true),
    log: () => output,
    async close() {
      await new Promise((resolve) => api.server.close(resolve));
      api.server.closeAllConnections();
      await stop(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilServing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`glewlwyd exited (${child.exitCode}):\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`glewlwyd did not serve ${url} within 20 s:\n${output()}`);
}


/** For a DPoP API: Glewlwyd's signing key, and whether Glewlwyd's database says a token (by jti) is revoked. */
interface DpopCheck {
  publicKey: KeyObject;
  revoked(jti: string): boolean;
}

/** The stand-in platform API on its own origin. */
async function startApi(issuer: string, dpop?: DpopCheck): Promise<{ url: string; server: Server }> {
  const seenJtis = new Set<string>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (url.pathname === '/.well-known/oauth-protected-resource') {
      return send(200, { resource: self, authorization_servers: [issuer], scopes_supported: API_SCOPES, bearer_methods_supported: ['header'] });
    }
    if (url.pathname !== '/v1/courses') return send(404, { error: 'not_found' });
    const challenge = (error: string, scope?: string) => ({
      'www-authenticate': `Bearer error="${error}"${scope ? `, scope="${scope}"` : ''}, resource_metadata="${self}/.well-known/oauth-protected-resource"`,
    });
    if (dpop) {
      void checkDpop(req.method ?? 'GET', `${self}${url.pathname}`, req.headers.authorization, req.headers.dpop, dpop, seenJtis)
        .then((claims) => {
          if (!String(claims.scope ?? '').split(' ').includes('courses:read')) return send(403, { error: 'insufficient_scope' });
          send(200, { items: [{ id: 'c-1', title: 'Quantum chemistry' }], user: claims.sub });
        })
        .catch((error: Error) => send(401, { error: 'invalid_token', error_description: error.message }, { 'www-authenticate': `DPoP algs="ES256", error="invalid_token"` }));
      return;
    }
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return send(401, { error: 'invalid_token' }, challenge('invalid_token'));
    void (async () => {
      // Glewlwyd's own check: UserInfo answers only for a valid access token it issued and has not revoked.
      const info = await fetch(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      if (!info.ok) return send(401, { error: 'invalid_token' }, challenge('invalid_token'));
      const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8') || '{}');
      if (!String(claims.scope ?? '').split(' ').includes('courses:read')) {
        return send(403, { error: 'insufficient_scope' }, challenge('insufficient_scope', 'courses:read'));
      }
      send(200, { items: [{ id: 'c-1', title: 'Quantum chemistry' }], user: ((await info.json()) as { sub?: string }).sub });
    })().catch(() => send(502, { error: 'upstream' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A resource server's checks of a DPoP-bound token and its proof (RFC 9449 §4.3, §7); throws what failed. */
async function checkDpop(method: string, htu: string, authorization: string | undefined, proof: string | string[] | undefined, dpop: DpopCheck, seen: Set<string>) {
  const { jwtVerify, EmbeddedJWK, calculateJwkThumbprint } = await import('jose');
  const token = /^DPoP (\S+)$/.exec(authorization ?? '')?.[1];
  if (!token) throw new Error(`not a DPoP token: ${(authorization ?? '').split(' ')[0] || 'none'}`);
  const { payload: claims } = await jwtVerify(token, dpop.publicKey);
  if (typeof claims.jti !== 'string' || dpop.revoked(claims.jti)) throw new Error('revoked or unknown token');
  const jkt = (claims.cnf as { jkt?: string } | undefined)?.jkt;
  if (!jkt) throw new Error('token not bound to a key');
  if (typeof proof !== 'string') throw new Error('no single DPoP proof');
  const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt' });
  if (!protectedHeader.jwk) throw new Error('no jwk');
  if ((await calculateJwkThumbprint(protectedHeader.jwk)) !== jkt) throw new Error("proof not signed by the token's key");
  if (payload.htm !== method || payload.htu !== htu) throw new Error('htm or htu');
  if (typeof payload.iat !== 'number' || Math.abs(payload.iat - Date.now() / 1000) > 60) throw new Error('iat');
  if (payload.ath !== createHash('sha256').update(token).digest('base64url')) throw new Error('ath');
  if (typeof payload.jti !== 'string' || seen.has(payload.jti)) throw new Error('proof replayed');
  seen.add(payload.jti);
  return claims;
}

/**
 * A pre-registered client, made through Glewlwyd's admin API as its administration page would (signed in as the
 * package's default administrator): public without a secret, else confidential with either secret method.
 */
export async function addClient(server: Glewlwyd, client: { clientId: string; secret?: string; redirectUri: string }): Promise<void> {
  const login = await fetch(`${server.origin}/api/auth/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'password' }),
  });
  if (!login.ok) throw new Error(`glewlwyd admin sign-in: HTTP ${login.status}`);
  const cookie = login.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
  const created = await fetch(`${server.origin}/api/client/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({
      client_id: client.clientId,
      name: client.secret ? 'plat integration' : 'plat',
      confidential: Boolean(client.secret),
      ...(client.secret ? { password: client.secret, token_endpoint_auth_method: ['client_secret_post', 'client_secret_basic'] } : {}),
      redirect_uri: [client.redirectUri],
      authorization_type: ['code', 'refresh_token'],
      scope: [],
      enabled: true,
    }),
  });
  if (!created.ok) throw new Error(`glewlwyd client: HTTP ${created.status} ${await created.text()}`);
}

/**
 * What Glewlwyd's own sign-in page does in a browser, over HTTP with a cookie jar: sign the user in (POST
 * /api/auth), grant the client the scopes it asked for (PUT /api/auth/grant/<client_id>, a space-separated list
 * as the page sends it), then load the authorization URL again with g_continue, which now redirects to plat's
 * callback. Returns that callback URL.
 */
async function approveOnGlewlwyd(server: Glewlwyd, authorizeUrl: string): Promise<string> {
  const cookies = new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return response;
  };
  const first = await send(authorizeUrl);
  await first.text();
  const login = await send(`${server.origin}/api/auth/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: USER.username, password: USER.password }),
  });
  if (!login.ok) throw new Error(`glewlwyd sign-in: HTTP ${login.status} ${await login.text()}`);
  const params = new URL(authorizeUrl).searchParams;
  const grant = await send(`${server.origin}/api/auth/grant/${encodeURIComponent(params.get('client_id')!)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ scope: params.get('scope') ?? '' }),
  });
  if (!grant.ok) throw new Error(`glewlwyd grant: HTTP ${grant.status} ${await grant.text()}`);
  // The sign-in page sends the browser back with g_continue: Glewlwyd's sign that the person has been asked.
  const again = await send(`${authorizeUrl}&g_continue`);
  const location = again.headers.get('location');
  if (again.status !== 302 || !location) throw new Error(`glewlwyd authorize: HTTP ${again.status} ${location ?? ''} ${await again.text()}`);
  return new URL(location, authorizeUrl).href;
}

/** plat login, consent given the way Glewlwyd's sign-in page gives it. */
export async function loginOnGlewlwyd(home: Home, server: Glewlwyd, args: string[] = [], options: RunOptions = {}) {
  let authorizeUrl: URL | undefined;
  const escaped = server.authorizationEndpoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const result = await home.run(['login', '--no-browser', '--base-url', server.baseUrl, ...args], {
    timeoutMs: scaled(30_000),
    ...options,
    onStderr: (stderr, child) => {
      const match = new RegExp(`(${escaped}\\?\\S+)`).exec(stderr);
      if (!match || authorizeUrl) return;
      authorizeUrl = new URL(match[1]!);
      void approveOnGlewlwyd(server, match[1]!)
        .then((callback) => fetch(callback).then((r) => r.text()))
        .catch((error: Error) => {
          child.stderr?.emit('data', `\n[test] consent failed: ${error.message}\n`);
          child.kill('SIGINT');
        });
    },
  });
  return { result, authorizeUrl };
}
