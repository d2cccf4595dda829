// The authorization server: oidc-provider configured with the spec's paths and policies. Everything protocol-
// related here is oidc-provider's own behaviour; this file only chooses the configuration.

import { generateKeyPair, randomBytes, randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { ALL_SCOPES, API_SCOPES } from './scopes.mjs';

export const DEMO_USER = Object.freeze({
  sub: 'user-ada',
  name: 'Ada Lovelace',
  given_name: 'Ada',
  family_name: 'Lovelace',
  preferred_username: 'ada',
  email: 'ada@example.test',
  email_verified: true,
});

/**
 * oidc-provider ships no type declarations (and @types/oidc-provider is not installed), so its objects stay untyped.
 * @typedef {any} OidcProvider
 */

export const PUBLIC_CLIENT_ID = 'plat-preregistered-public';
export const CONFIDENTIAL_CLIENT_ID = 'plat-integration';

// oidc-provider prints these on import/construction. They are expected for a throwaway test server (Node 20
// runtime, in-memory adapter) and would only clutter test output and the sandbox's stdout.
const KNOWN_NOISE = [
  'oidc-provider WARNING: Unsupported runtime',
  'oidc-provider WARNING: a quick start development-only in-memory adapter is used',
];

/**
 * Runs fn with console.warn/info filtered for oidc-provider's known start-up noise only.
 * @template T
 * @param {() => Promise<T> | T} fn
 * @returns {Promise<T>}
 */
async function withoutKnownNoise(fn) {
  const { warn, info } = console;
  /** @param {(...args: unknown[]) => void} original */
  const filtered = (original) => (/** @type {unknown[]} */ ...args) => {
    const first = args[0];
    if (typeof first === 'string' && KNOWN_NOISE.some((noise) => first.includes(noise))) return;
    original.apply(console, args);
  };
  console.warn = filtered(warn);
  console.info = filtered(info);
  try {
    return await fn();
  } finally {
    console.warn = warn;
    console.info = info;
  }
}

/** @type {Promise<any> | undefined} */
let oidcModule;
function loadOidcProvider() {
  oidcModule ??= withoutKnownNoise(() => import('oidc-provider'));
  return oidcModule;
}

/** @type {Promise<object> | undefined} */
let signingKey;
/**
 * One RSA signing key per process, and per test run: generating it is the slowest part of start-up (100–400 ms of
 * CPU for a 2048-bit key), every test file's process starts a platform, and nothing depends on the key being new.
 * Under test/run.mjs (PLAT_TEST_SHARED_DIR set) the first process to make it leaves it in the run's private
 * temporary directory (its TMPDIR, 0700, removed after the run) and the later ones read it; anywhere else (npm run
 * sandbox, vitest started by hand) each process makes its own.
 */
function getSigningJwk() {
  signingKey ??= runSigningJwk();
  return signingKey;
}

async function runSigningJwk() {
  const file = process.env.PLAT_TEST_SHARED_DIR ? path.join(os.tmpdir(), 'plat-test-signing-key.json') : undefined;
  if (file) {
    try {
      return JSON.parse(await readFile(file, 'utf8'));
    } catch {
      // not made yet (or by a process that is writing it now): make one
    }
  }
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
  if (file) {
    // Whole or not at all for a reader: written aside, then renamed over. Two processes that both made one each keep
    // their own; the last rename is the one later processes read.
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(jwk), { mode: 0o600 })
      .then(() => rename(temp, file))
      .catch(() => undefined);
  }
  return jwk;
}

/** @param {string} uri */
function isLoopbackHttp(uri) {
  const parsed = URL.parse(uri);
  return (
    parsed !== null &&
    parsed.protocol === 'http:' &&
    ['127.0.0.1', '[::1]', 'localhost'].includes(parsed.hostname) &&
    parsed.hash === '' &&
    parsed.username === '' &&
    parsed.password === ''
  );
}

/**
 * @typedef {object} ProviderSetup
 * @property {string} issuer
 * @property {import('./index.mjs').Knobs} knobs
 * @property {number} refreshTokenTtl  default refresh token lifetime in seconds (knobs.refreshTokenTtl wins when set)
 * @property {object[]} extraClients
 * @property {'client_secret_post' | 'client_secret_basic'} [confidentialAuthMethod]  how the pre-registered
 *   confidential integration authenticates; the metadata then lists only that secret method (default post)
 * @property {boolean} [dpop]  DPoP (RFC 9449) on: dpop_signing_alg_values_supported listed, bound tokens issued
 */

/**
 * @param {ProviderSetup} setup
 */
export async function createProvider({ issuer, knobs, refreshTokenTtl, extraClients, confidentialAuthMethod = 'client_secret_post', dpop = false }) {
  const [{ default: Provider, errors }, jwk] = await Promise.all([loadOidcProvider(), getSigningJwk()]);
  const confidentialClientSecret = randomBytes(32).toString('base64url');
  const baseUrl = issuer;

  const loopbackClient = {
    application_type: 'native',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };

  /** @type {Record<string, any>} oidc-provider configuration */
  const configuration = {
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    clockTolerance: 0,
    // offline_access is accepted always but listed in the metadata only under knobs.offlineAccess (index.mjs).
    scopes: [...ALL_SCOPES, 'offline_access'],
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    responseTypes: ['code'],
    clientAuthMethods: ['none', confidentialAuthMethod],
    clientDefaults: {
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'RS256',
    },
    clients: [
      { ...loopbackClient, client_id: PUBLIC_CLIENT_ID, client_name: 'plat (pre-registered)', token_endpoint_auth_method: 'none' },
      {
        ...loopbackClient,
        client_id: CONFIDENTIAL_CLIENT_ID,
        client_name: 'plat integration',
        client_secret: confidentialClientSecret,
        token_endpoint_auth_method: confidentialAuthMethod,
      },
      ...extraClients,
    ],
    routes: {
      authorization: '/oauth/authorize',
      token: '/api/oauth/token',
      userinfo: '/api/oauth/userinfo',
      revocation: '/api/oauth/revoke',
      registration: '/api/oauth/register',
      jwks: '/api/oauth/jwks',
      introspection: '/api/oauth/introspect',
      end_session: '/api/oauth/logout',
      pushed_authorization_request: '/api/oauth/par',
      device_authorization: '/api/oauth/device/auth',
      code_verification: '/api/oauth/device',
      backchannel_authentication: '/api/oauth/backchannel',
      challenge: '/api/oauth/challenge',
      credential: '/api/oauth/credential',
    },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      revocation: {
        enabled: true,
        // A client may revoke only its own tokens (RFC 7009 §2.1); a foreign token is ignored, not an error.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: true },
      // RFC 8628, for plat login --device. Plain pages (no outside fonts): the test driver and Chromium submit them.
      deviceFlow: { enabled: true, userCodeInputSource, userCodeConfirmSource, successSource: deviceSuccessSource },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // RFC 9449, for the DPoP-bound sessions (startPlatform({ dpop: true })): proofs at the token and UserInfo
      // endpoints; knobs.dpopNonce 'required' has the token endpoint ask for its nonce (use_dpop_nonce, §8).
      dPoP: dpop
        ? { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => knobs.dpopNonce !== 'off' }
        : { enabled: false },
      // Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): always configured, but only
      // advertised and honoured while knobs.clientIdMetadataDocuments is on. oidc-provider fetches https
      // documents itself; index.mjs adds http://127.0.0.1 documents for tests (knobs.clientIdMetadataDocumentsOverHttp).
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async () => knobs.clientIdMetadataDocuments,
        allowClient: async () => knobs.clientIdMetadataDocuments,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => false,
        // RFC 8707: the only protected resource is this platform's API, identified by its base URL.
        getResourceServerInfo: async (_ctx, resource) => {
          const wanted = resource.replace(/\/$/, '');
          const mcp = knobs.postOnlyMcp && wanted === `${baseUrl}/mcp`;
          if (knobs.refuseResources || (wanted !== baseUrl && !mcp && !knobs.extraResources.includes(wanted))) throw new errors.InvalidTarget();
          return { scope: API_SCOPES.join(' '), audience: resource, accessTokenFormat: 'opaque' };
        },
      },
    },
    // The spec's registration policy: loopback redirect URIs only. oidc-provider's own schema already refuses
    // non-loopback http for native clients; this refuses https and custom schemes too. Error descriptions that
    // start with "redirect_uris" are reported by oidc-provider as invalid_redirect_uri.
    extraClientMetadata: {
      properties: ['software_id', 'software_version'],
      validator(ctx, key, _value, metadata) {
        if (key !== 'software_id' || ctx?.oidc?.route !== 'registration') return;
        const uris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
        const refused = uris.find((uri) => typeof uri !== 'string' || !isLoopbackHttp(uri));
        if (refused !== undefined) {
          throw new errors.InvalidClientMetadata(
            `redirect_uris must be loopback addresses (http://127.0.0.1:<port>/<path>); ${JSON.stringify(refused)} needs a registered integration`,
          );
        }
      },
    },
    // knobs.offlineAccess: OIDC Core §11, a refresh token only when offline_access was granted (many providers).
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && (!knobs.offlineAccess || code.scopes.has('offline_access')),
    rotateRefreshToken: async () => knobs.rotateRefreshTokens,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: () => knobs.accessTokenTtl,
      AuthorizationCode: 60,
      ClientCredentials: 600,
      DeviceCode: () => knobs.deviceCodeTtl ?? 600,
      BackchannelAuthenticationRequest: 600,
      PreAuthorizedCode: 600,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 14 * 24 * 3600,
      Session: 14 * 24 * 3600,
      RefreshToken: () => knobs.refreshTokenTtl ?? refreshTokenTtl,
    },
    clientBasedCORS: () => false,
    findAccount: async (_ctx, sub) =>
      sub === DEMO_USER.sub ? { accountId: sub, claims: async () => ({ ...DEMO_USER }) } : undefined,
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(out);
    },
  };

  const provider = await withoutKnownNoise(() => new Provider(issuer, configuration));
  return { provider, errors, confidentialClientSecret };
}

/** @param {unknown} s */
export function escapeHtml(s) {
  /** @type {Record<string, string>} */
  const entities = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  return String(s).replace(/[&<>"']/g, (c) => entities[c] ?? c);
}

/** @param {Record<string, unknown>} out */
export function errorPage(out) {
  const rows = Object.entries(out)
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Sign-in error</title></head>
<body><h1>Sign-in error</h1><dl id="error">${rows}</dl></body></html>`;
}

/** The page where a user types the code shown by the device (RFC 8628 §3.3). */
async function userCodeInputSource(ctx, form, _out, err) {
  const message = err ? '<p id="error">That code is not valid. Check it and try again.</p>' : '<p>Enter the code your device shows.</p>';
  ctx.type = 'html';
  ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Sign in a device</title></head>
<body><h1>Sign in a device</h1>${message}${form}<button id="continue" type="submit" form="op.deviceInputForm">Continue</button></body></html>`;
}

/** The page that asks the user to confirm the code their device shows (RFC 8628 §5.4: check it matches). */
async function userCodeConfirmSource(ctx, form, client, _deviceInfo, userCode) {
  ctx.type = 'html';
  ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Confirm the device</title></head>
<body><h1>Confirm the device</h1><p><strong>${escapeHtml(client.clientName ?? client.clientId)}</strong> asks to sign in. Check that your device shows <code id="user-code">${escapeHtml(userCode)}</code>.</p>
${form}<button id="continue" type="submit" form="op.deviceConfirmForm">Continue</button>
<button id="abort" type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button></body></html>`;
}

async function deviceSuccessSource(ctx) {
  ctx.type = 'html';
  ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Device signed in</title></head>
<body><h1 id="device-done">Device signed in</h1><p>You can close this page and return to your device.</p></body></html>`;
}
