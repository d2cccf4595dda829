/**
 * Which OAuth client a login acts as, and keeping that choice honest: reuse a registration plat made earlier, use
 * a pre-registered integration (--client-id) or a client ID metadata document, or register anew; drop a stored
 * registration the server no longer knows, and find out why a login got no answer.
 */
import type { Context } from '../../context.js';
import { AuthError, InterruptedError, PlatError, UsageError } from '../../errors.js';
import { probeAuthorization } from '../../oauth/authorize.js';
import { isMetadataDocumentClient, knownClient, registerClient, supportsClientMetadataDocuments, type ClientCredentials } from '../../oauth/client.js';
import type { Discovery } from '../../oauth/discovery.js';
import { scopesToRegister } from '../../oauth/scopes.js';
import { DEVICE_GRANT_TYPE, offersDeviceFlow } from '../../oauth/device.js';
import { oauthErrorOf } from '../../oauth/errors.js';
import type { OAuthDeps } from '../../oauth/options.js';
import { ClientRejectedError } from '../../oauth/tokens.js';
import { CALLBACK_PATH, type LoopbackListener } from '../../loopback.js';
import type { ClientRegistration, Profile } from '../../store/types.js';
import { loadSession } from '../tokens/access.js';
import { readKeptClientSecret } from '../tokens/client-secret.js';
import { portOf } from './consent.js';
import type { ClientChoice } from './options.js';

/**
 * Which client this login uses. `stored`: a registration plat made earlier at this issuer, reused. `known`: a
 * client the server knows without a registration (--client-id, --client-metadata-url, or one of those remembered
 * by the profile, with the port it used last). Neither: plat registers itself.
 */
export interface ClientPlan {
  stored?: ClientRegistration;
  /** The secret the server assigned to `stored`, when it registered plat as a confidential client. */
  storedSecret?: string;
  known?: { clientId: string; secret?: string; port?: number };
}

/** The client of one authorization attempt, and whether plat registered it during this attempt. */
export interface SettledClient {
  credentials: ClientCredentials;
  fresh: boolean;
}

/**
 * The flags name the client when given; otherwise the profile's client at this issuer is used again, whatever
 * kind it is, so a later `plat login` needs no flags. A confidential integration's secret lives with the session:
 * a login while signed in (a step-up) reuses it; after logout it must be passed again.
 */
export async function planClient(
  ctx: Context,
  profile: Profile,
  stored: ClientRegistration | undefined,
  discovery: Discovery,
  choice: ClientChoice,
  given: { secret?: string; metadataUrl?: string },
): Promise<ClientPlan> {
  const confidential = stored && !stored.dynamic && stored.authMethod === 'client_secret_post' ? stored : undefined;
  // The port a client the server knows used last time: a server that matches ports exactly expects it again.
  const lastPort = (clientId: string) => (stored && !stored.dynamic && stored.clientId === clientId ? portOf(stored.redirectUris[0]) : undefined);
  if (given.metadataUrl) {
    if (!supportsClientMetadataDocuments(discovery.as)) {
      throw new UsageError(
        `The authorization server ${discovery.issuer} does not support client ID metadata documents (its metadata lacks client_id_metadata_document_supported), so --client-metadata-url cannot be used there. Leave it out to let plat register itself, or use --client-id with a pre-registered client.`,
      );
    }
    return { known: { clientId: given.metadataUrl, port: lastPort(given.metadataUrl) } };
  }
  if (choice.kind === 'registered') {
    const { clientId } = choice;
    const port = lastPort(clientId);
    if (given.secret) return { known: { clientId, secret: given.secret, port } };
    if (confidential?.clientId === clientId) {
      return { known: { clientId, secret: await storedSecret(ctx, profile, confidential), port } };
    }
    return { known: { clientId, port } };
  }
  if (!stored) return {};
  if (stored.dynamic) return planStoredRegistration(ctx, profile, stored);
  if (isMetadataDocumentClient(stored) && !supportsClientMetadataDocuments(discovery.as)) {
    ctx.io.note(`The server no longer supports client ID metadata documents, so plat cannot use ${stored.clientId}; registering itself instead.`);
    return {};
  }
  const port = lastPort(stored.clientId);
  if (confidential) return { known: { clientId: confidential.clientId, secret: await storedSecret(ctx, profile, confidential), port } };
  return { known: { clientId: stored.clientId, port } };
}

/**
 * A registration plat made earlier is reused; one the server made confidential needs its secret (beside the
 * session, or kept across a logout), and one whose secret has expired or is gone is replaced by a new registration.
 */
async function planStoredRegistration(ctx: Context, profile: Profile, stored: ClientRegistration): Promise<ClientPlan> {
  if (stored.authMethod !== 'client_secret_post') return { stored };
  if (stored.secretExpiresAt !== undefined && stored.secretExpiresAt <= ctx.now()) {
    ctx.io.note("The secret of plat's registration at this server has expired (client_secret_expires_at); registering again.");
    return {};
  }
  const secret = await keptSecret(ctx, profile, { tolerant: true });
  if (!secret) {
    ctx.io.note("The secret of plat's registration at this server is no longer in the token store; registering again.");
    return {};
  }
  return { stored, storedSecret: secret };
}

async function storedSecret(ctx: Context, profile: Profile, client: ClientRegistration): Promise<string> {
  const secret = await keptSecret(ctx, profile);
  if (secret) return secret;
  const which = profile.name === 'default' ? '' : ` --profile ${profile.name}`;
  throw new UsageError(
    `Profile ${profile.name} signs in with the confidential integration ${client.clientId}, and its secret went with the last logout. ` +
      `Pass it again: plat login${which} --client-id ${client.clientId} --client-secret-stdin < secret-file`,
  );
}

/**
 * A confidential client's secret: beside the session, or kept across a logout (tokens/client-secret.ts). `tolerant`:
 * a session out of reach counts as none (plat's own registration is then made anew) instead of stopping the login.
 */
async function keptSecret(ctx: Context, profile: Profile, options: { tolerant?: boolean } = {}): Promise<string | undefined> {
  const active = options.tolerant ? await loadSession(ctx, profile).catch(() => undefined) : await loadSession(ctx, profile);
  return active?.session.clientSecret ?? (await readKeptClientSecret(ctx, profile));
}

/**
 * A stored registration is reused as is on its own port. On another port (the registered one was busy, or --port
 * names another) plat asks the authorization endpoint once whether it accepts the new redirect URI: servers that
 * follow RFC 8252 §7.3 accept any loopback port, and then the registration is kept; a server that matches ports
 * exactly refuses, and then plat registers anew. Without that question the browser would show an error page
 * plat never sees.
 */
export async function settleClient(
  ctx: Context,
  discovery: Discovery,
  listener: LoopbackListener,
  plan: ClientPlan,
  scopes: string[],
): Promise<SettledClient> {
  if (plan.known) {
    const { clientId, secret } = plan.known;
    return { credentials: knownClient({ clientId, secret, issuer: discovery.issuer, redirectUri: listener.redirectUri, now: ctx.now() }), fresh: false };
  }
  const missing = plan.stored?.scopes ? scopes.filter((scope) => !plan.stored!.scopes!.includes(scope)) : [];
  if (plan.stored && missing.length > 0) {
    // RFC 7591 §2: a client may ask only for the scopes it registered; a server that holds it to that would refuse.
    ctx.io.note(`plat's registration does not include ${missing.join(' ')}; registering again with the scopes asked for now.`);
  } else if (plan.stored) {
    const registeredPort = portOf(plan.stored.redirectUris[0]);
    const reused = { credentials: { registration: plan.stored, secret: plan.storedSecret }, fresh: false };
    if (registeredPort === listener.port) return reused;
    const verdict = await probeAuthorization(await deps(ctx), discovery.as, plan.stored, { redirectUri: listener.redirectUri, scopes });
    if (verdict !== 'rejected') return reused;
    ctx.io.note(
      `The server does not accept plat's registration on port ${listener.port} (it was made for port ${registeredPort ?? 'another'}); registering again.`,
    );
  }
  return register(ctx, discovery, listener.redirectUri, scopes, 'code');
}

/** Where a device login's registration says plat would be redirected, were it ever: no listener is started. */
const DEVICE_REDIRECT_URI = `http://127.0.0.1${CALLBACK_PATH}`;

/**
 * The client of a device login: one the server knows, or plat's registration when it was made for the device
 * flow too (and the scopes asked for now); otherwise plat registers anew.
 */
export async function settleDeviceClient(ctx: Context, discovery: Discovery, plan: ClientPlan, scopes: string[]): Promise<SettledClient> {
  if (plan.known) {
    const { clientId, secret, port } = plan.known;
    // The port a browser login used with this client stays with it (stored as its redirect), so the next browser
    // login asks for the same one: servers that match a redirect exactly would refuse another.
    const redirectUri = port ? `http://127.0.0.1:${port}${CALLBACK_PATH}` : DEVICE_REDIRECT_URI;
    return { credentials: knownClient({ clientId, secret, issuer: discovery.issuer, redirectUri, now: ctx.now() }), fresh: false };
  }
  if (plan.stored) {
    const missing = plan.stored.scopes ? scopes.filter((scope) => !plan.stored!.scopes!.includes(scope)) : [];
    if (!plan.stored.grantTypes?.includes(DEVICE_GRANT_TYPE)) {
      ctx.io.note("plat's registration at this server was not made for the device flow; registering again for it.");
    } else if (missing.length > 0) {
      ctx.io.note(`plat's registration does not include ${missing.join(' ')}; registering again with the scopes asked for now.`);
    } else {
      return { credentials: { registration: plan.stored, secret: plan.storedSecret }, fresh: false };
    }
  }
  return register(ctx, discovery, DEVICE_REDIRECT_URI, scopes, 'device');
}

/**
 * Registers plat: for the code grant, and for the device grant beside it where the server offers that, so one
 * registration serves both kinds of login (RFC 7591 `grant_types`). A server that refuses the combination gets a
 * registration for the kind of login at hand alone.
 */
async function register(ctx: Context, discovery: Discovery, redirectUri: string, scopes: string[], kind: 'code' | 'device'): Promise<SettledClient> {
  const both = ['authorization_code', 'refresh_token', ...(offersDeviceFlow(discovery.as) ? [DEVICE_GRANT_TYPE] : [])];
  const alone = kind === 'code' ? ['authorization_code', 'refresh_token'] : [DEVICE_GRANT_TYPE, 'refresh_token'];
  const input = {
    redirectUri,
    clientName: `plat on ${ctx.hostname()}`,
    scopes: scopesToRegister(scopes, discovery.as.scopes_supported),
    now: ctx.now(),
    guessedEndpoint: discovery.filledFromSpec.includes('registration_endpoint'),
  };
  let registered: Awaited<ReturnType<typeof registerClient>>;
  try {
    registered = await registerClient(await deps(ctx), discovery.as, { ...input, grantTypes: both });
  } catch (error) {
    const refused = oauthErrorOf((error as { cause?: unknown }).cause)?.error;
    if (both.length === alone.length || (refused !== 'invalid_client_metadata' && refused !== 'unapproved_software_statement' && refused !== 'invalid_grant_type')) throw error;
    registered = await registerClient(await deps(ctx), discovery.as, { ...input, grantTypes: alone });
  }
  const { registration, secret } = registered;
  ctx.secrets.remember(secret);
  if (secret && ctx.globals.verbose) ctx.io.note(`The server registered plat as a confidential client (${registration.secretMethod ?? 'client secret'}); its secret is kept in the token store.`);
  return { credentials: { registration, secret }, fresh: true };
}

/**
 * A login with a client the server should know got no answer (timeout or Ctrl-C). A server that does not accept
 * the client or its redirect URI shows the browser an error page and never calls back, so plat cannot tell this
 * apart from a user who walked away — except by asking, which it does now, once (bounded: after Ctrl-C the
 * process must still end within seconds). A stored registration the server refuses is dropped, so the next
 * plat login registers anew instead of meeting the same error page.
 */
export async function diagnoseNoAnswer(
  ctx: Context,
  profile: Profile,
  discovery: Discovery,
  credentials: ClientCredentials,
  request: { redirectUri: string; scopes: string[] },
  error: PlatError,
): Promise<void> {
  const interrupted = error instanceof InterruptedError;
  let verdict: Awaited<ReturnType<typeof probeAuthorization>> = 'unknown';
  if (interrupted) {
    // The context's HTTP client is already aborted by Ctrl-C: ask with a short-lived one of our own.
    const { createHttp } = await import('../../http/index.js');
    const http = createHttp({
      io: ctx.io,
      env: ctx.env,
      verbose: ctx.globals.verbose,
      userAgent: `plat/${ctx.version}`,
      now: ctx.now,
      signal: AbortSignal.timeout(1500),
    });
    try {
      verdict = await probeAuthorization({ fetch: http.fetch }, discovery.as, credentials.registration, request);
    } catch {
      // no verdict
    } finally {
      await http.close().catch(() => {});
    }
  } else {
    verdict = await probeAuthorization(await deps(ctx), discovery.as, credentials.registration, request);
  }
  if (verdict !== 'rejected') return;

  const { registration } = credentials;
  let message: string;
  if (registration.dynamic) {
    const dropped = await forgetRegistration(ctx, profile, registration);
    // When the profile could not be written (said above), the next login still registers anew: it replaces it.
    message = `The server no longer accepts plat's registration, so the browser showed an error page instead of asking for consent. ${dropped ? 'plat dropped the registration: run' : 'Run'} plat login again to register anew.`;
  } else if (isMetadataDocumentClient(registration)) {
    message = `The server does not accept the client ${registration.clientId} with the redirect address ${request.redirectUri}, so the browser showed an error page. Check that the document is reachable from the server, that its client_id is exactly its URL, and that its redirect_uris include http://127.0.0.1/callback.`;
  } else {
    message = `The server does not accept the client ${registration.clientId} with the redirect address ${request.redirectUri}, so the browser showed an error page. Check --client-id, and that the client allows loopback redirects (or pass the port it expects with --port).`;
  }
  if (interrupted) {
    ctx.io.warn(message);
    return;
  }
  throw new AuthError(`${error.message} ${message}`, { cause: error });
}

/** invalid_client from the token endpoint, said for the client that got it. */
export function clientRejected(client: SettledClient, error: ClientRejectedError): AuthError {
  const { registration, secret } = client.credentials;
  const detail = `invalid_client${error.description ? `: ${error.description}` : ''}`;
  let message: string;
  if (registration.dynamic) {
    message = `The server rejected the registration plat had just made (${detail}). Try plat login again later.`;
  } else if (secret) {
    message = `The server rejected the credentials of the integration ${registration.clientId} (${detail}). Check --client-id and the secret passed on stdin.`;
  } else if (isMetadataDocumentClient(registration)) {
    message = `The server did not accept the client metadata document ${registration.clientId} (${detail}). Check that it is reachable and that its client_id is exactly its URL.`;
  } else {
    message = `The server does not accept the client ${registration.clientId} (${detail}). Check --client-id; a confidential integration also needs --client-secret-stdin.`;
  }
  return new AuthError(message, { cause: error });
}

/**
 * Drops the profile's registration, if it is still the one the server refused (another process may have replaced
 * it). False when the profile could not be read or written: that is said as a warning, and the login goes on.
 */
export async function forgetRegistration(ctx: Context, profile: Profile, refused: ClientRegistration): Promise<boolean> {
  try {
    await ctx.withLock(profile.name, async () => {
      const profiles = await ctx.profiles();
      const current = await profiles.load(profile.name);
      if (current?.client?.clientId === refused.clientId) await profiles.save({ ...current, client: undefined });
    });
    return true;
  } catch (error) {
    if (!(error instanceof PlatError)) throw error;
    ctx.io.warn(error.message);
    return false;
  }
}

/** The protocol layer's side effects: plat's HTTP client, and its notes on stderr under --verbose. */
export async function deps(ctx: Context): Promise<OAuthDeps> {
  return { fetch: (await ctx.http()).fetch, note: ctx.globals.verbose ? (text) => ctx.io.note(text) : undefined };
}
