/**
 * `plat login`: discover → check PKCE, scopes and the client flags → listen on loopback → settle the client (a
 * stored registration, a pre-registered integration, a client ID metadata document, or a new registration) → open
 * the consent page → wait for the callback (or the address pasted on stdin) → exchange the code → store the
 * session → read UserInfo. Nothing is written until tokens are in hand, with one exception: a stored registration
 * the server turned out not to know any more is dropped, so the next login registers anew.
 */
import type { Context } from '../context.js';
import { AuthError, InterruptedError, PlatError, UsageError } from '../errors.js';
import { buildAuthorizationRequest, newLoginSecrets, probeAuthorization, validateCallback } from '../oauth/authorize.js';
import {
  isMetadataDocumentClient,
  knownClient,
  parseClientMetadataUrl,
  registerClient,
  supportsClientMetadataDocuments,
  type ClientCredentials,
} from '../oauth/client.js';
import { assertS256, type Discovery } from '../oauth/discovery.js';
import type { OAuthDeps } from '../oauth/options.js';
import { checkScopesSupported, parseScopeArgs, scopesToRequest } from '../oauth/scopes.js';
import { ClientRejectedError, exchangeCode } from '../oauth/tokens.js';
import { fetchUserInfo, toProfileUser } from '../oauth/userinfo.js';
import type { Callback, LoopbackListener } from '../loopback.js';
import type { ClientRegistration, Profile, ProfileUser, StoredSession } from '../store/types.js';
import { loadSession } from './access.js';
import { getDiscovery } from './discovery-cache.js';
import { readStdinLines, type StdinLines } from './paste.js';
import { loadProfile, requireBaseUrl } from './profile.js';

export interface LoginOptions {
  scope?: string[];
  addScope?: string[];
  browser: boolean;
  port?: number;
  resource?: string;
  clientId?: string;
  clientSecretStdin?: boolean;
  clientMetadataUrl?: string;
  timeoutSeconds: number;
}

export interface LoginResult {
  profile: Profile;
  session: StoredSession;
  tokenStoreLocation: string;
}

/**
 * Which client this login uses. `stored`: a registration plat made earlier at this issuer, reused. `known`: a
 * client the server knows without a registration (--client-id, --client-metadata-url, or one of those remembered
 * by the profile, with the port it used last). Neither: plat registers itself.
 */
interface ClientPlan {
  stored?: ClientRegistration;
  known?: { clientId: string; secret?: string; port?: number };
}

/** The client of one authorization attempt, and whether plat registered it during this attempt. */
interface SettledClient {
  credentials: ClientCredentials;
  fresh: boolean;
}

export async function login(ctx: Context, options: LoginOptions): Promise<LoginResult> {
  const { io } = ctx;
  const profile = await loadProfile(ctx);
  const baseUrl = requireBaseUrl(ctx, profile);
  const sameServer = profile.baseUrl === baseUrl;
  const added = parseScopeArgs(options.addScope);
  if (added.length > 0 && !(sameServer && profile.scopes)) {
    throw new UsageError('--add-scope adds to an existing session on the same server; run plat login --scope … first.');
  }
  const scopes = scopesToRequest(parseScopeArgs(options.scope), added, sameServer ? profile.scopes : undefined);
  if (options.clientSecretStdin && !options.clientId) throw new UsageError('--client-secret-stdin needs --client-id.');
  if (options.clientMetadataUrl !== undefined && options.clientId) {
    throw new UsageError('--client-metadata-url and --client-id name two different clients; pass one of them.');
  }
  const metadataUrl = options.clientMetadataUrl !== undefined ? parseClientMetadataUrl(options.clientMetadataUrl) : undefined;
  const resource = options.resource ?? (sameServer ? profile.resource : undefined);
  if (resource) validateResource(resource);

  const stdin = readStdinLines(io.stdin);
  let listener: LoopbackListener | undefined;
  try {
    const secret = options.clientSecretStdin ? await readSecret(stdin) : undefined;
    let discovery = await getDiscovery(ctx, baseUrl);
    const stored = profile.client?.issuer === discovery.issuer ? profile.client : undefined;
    const documentClient = metadataUrl ?? (!options.clientId && stored && isMetadataDocumentClient(stored) ? stored.clientId : undefined);
    if (documentClient && !supportsClientMetadataDocuments(discovery.as)) {
      // The cached metadata may predate the server's support: look once more before refusing.
      discovery = await getDiscovery(ctx, baseUrl, { refresh: true });
    }
    const { as } = discovery;
    assertS256(as);
    checkScopesSupported(scopes, as.scopes_supported);
    let plan = await planClient(ctx, profile, stored, discovery, options, { secret, metadataUrl });

    for (let attempt = 1; ; attempt++) {
      const secrets = newLoginSecrets();
      listener = await listen(options.port, plan.stored ? portOf(plan.stored.redirectUris[0]) : plan.known?.port, secrets.state);
      const client = await settleClient(ctx, discovery, listener, plan, scopes);
      const { registration } = client.credentials;
      const request = await buildAuthorizationRequest(as, registration, { redirectUri: listener.redirectUri, scopes, resource, ...secrets });

      let callback: Callback;
      try {
        callback = await waitForConsent(ctx, listener, stdin, request.url, options);
      } catch (error) {
        if (!client.fresh && (error instanceof InterruptedError || error instanceof AuthError)) {
          await diagnoseNoAnswer(ctx, profile, discovery, client.credentials, { redirectUri: listener.redirectUri, scopes }, error);
        }
        throw error;
      }

      let exchanged: Awaited<ReturnType<typeof exchangeCode>>;
      try {
        const params = validateCallback(as, registration, callback.url, request.state);
        exchanged = await exchangeCode(await deps(ctx), as, client.credentials, {
          callbackParams: params,
          redirectUri: request.redirectUri,
          codeVerifier: request.codeVerifier,
          resource,
          requestedScopes: scopes,
          now: ctx.now(),
        });
      } catch (error) {
        const retry = error instanceof ClientRejectedError && registration.dynamic && !client.fresh && attempt === 1;
        callback.respond(
          retry
            ? { ok: false, title: 'One more step', message: 'The server no longer knew plat. plat registered again and opened a new sign-in: see your terminal.' }
            : { ok: false, title: 'Sign-in failed', message: 'plat could not complete the sign-in. Details are in your terminal.' },
        );
        if (!(error instanceof ClientRejectedError)) throw error;
        if (!retry) throw clientRejected(client, error);
        // invalid_client at the token endpoint is the one sign that plat can see of a server that forgot its
        // registration: drop it, register anew and ask once more.
        await forgetRegistration(ctx, profile, registration);
        io.note(`The server no longer recognises plat's registration (invalid_client); registering again and asking once more.`);
        await listener.close();
        listener = undefined;
        plan = {};
        continue;
      }
      callback.respond({ ok: true, title: 'Signed in to plat', message: 'You can close this tab and return to your terminal.' });
      await listener.close();
      listener = undefined;

      const session = exchanged.session;
      if (client.credentials.secret) session.clientSecret = client.credentials.secret;
      const user = await readUser(ctx, discovery, client.credentials, session, { subject: exchanged.idTokenSubject, resource });
      return await persist(ctx, profile, { baseUrl, discovery, registration, session, user, resource });
    }
  } finally {
    stdin.close();
    await listener?.close();
  }
}

async function deps(ctx: Context): Promise<OAuthDeps> {
  return { fetch: (await ctx.http()).fetch };
}

function validateResource(resource: string): void {
  try {
    const url = new URL(resource);
    if (url.hash) throw new Error('fragment');
  } catch {
    throw new UsageError(`--resource must be an absolute URI without a fragment (RFC 8707): ${resource}`);
  }
}

async function readSecret(stdin: StdinLines): Promise<string> {
  const line = (await stdin.next())?.trim();
  if (!line) throw new UsageError('--client-secret-stdin expects the client secret on the first line of stdin, and stdin was empty.');
  return line;
}

/**
 * The flags name the client when given; otherwise the profile's client at this issuer is used again, whatever
 * kind it is, so a later `plat login` needs no flags. A confidential integration's secret lives with the session:
 * a login while signed in (a step-up) reuses it; after logout it must be passed again.
 */
async function planClient(
  ctx: Context,
  profile: Profile,
  stored: ClientRegistration | undefined,
  discovery: Discovery,
  options: LoginOptions,
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
  if (options.clientId) {
    const port = lastPort(options.clientId);
    if (given.secret) return { known: { clientId: options.clientId, secret: given.secret, port } };
    if (confidential?.clientId === options.clientId) {
      return { known: { clientId: options.clientId, secret: await storedSecret(ctx, profile, confidential), port } };
    }
    return { known: { clientId: options.clientId, port } };
  }
  if (!stored) return {};
  if (stored.dynamic) return { stored };
  if (isMetadataDocumentClient(stored) && !supportsClientMetadataDocuments(discovery.as)) {
    ctx.io.note(`The server no longer supports client ID metadata documents, so plat cannot use ${stored.clientId}; registering itself instead.`);
    return {};
  }
  const port = lastPort(stored.clientId);
  if (confidential) return { known: { clientId: confidential.clientId, secret: await storedSecret(ctx, profile, confidential), port } };
  return { known: { clientId: stored.clientId, port } };
}

async function storedSecret(ctx: Context, profile: Profile, client: ClientRegistration): Promise<string> {
  const secret = (await loadSession(ctx, profile))?.session.clientSecret;
  if (secret) return secret;
  const which = profile.name === 'default' ? '' : ` --profile ${profile.name}`;
  throw new UsageError(
    `Profile ${profile.name} signs in with the confidential integration ${client.clientId}, and its secret went with the last logout. ` +
      `Pass it again: plat login${which} --client-id ${client.clientId} --client-secret-stdin < secret-file`,
  );
}

/**
 * Listens on --port, or on the port the stored client used last (so servers that match redirect URIs exactly
 * still accept it), or on any free port.
 */
async function listen(port: number | undefined, lastPort: number | undefined, expectedState: string): Promise<LoopbackListener> {
  const { startLoopback } = await import('../loopback.js');
  if (port === undefined && lastPort) {
    try {
      return await startLoopback({ port: lastPort, expectedState });
    } catch {
      // taken by something else: for a stored registration, settleClient finds out whether another port is accepted
    }
  }
  return startLoopback({ port, expectedState });
}

function portOf(uri: string | undefined): number | undefined {
  if (!uri) return undefined;
  try {
    const port = Number(new URL(uri).port);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A stored registration is reused as is on its own port. On another port (the registered one was busy, or --port
 * names another) plat asks the authorization endpoint once whether it accepts the new redirect URI: servers that
 * follow RFC 8252 §7.3 accept any loopback port, and then the registration is kept; a server that matches ports
 * exactly refuses, and then plat registers anew. Without that question the browser would show an error page
 * plat never sees.
 */
async function settleClient(
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
  if (plan.stored) {
    const registeredPort = portOf(plan.stored.redirectUris[0]);
    if (registeredPort === listener.port) return { credentials: { registration: plan.stored }, fresh: false };
    const verdict = await probeAuthorization(await deps(ctx), discovery.as, plan.stored, { redirectUri: listener.redirectUri, scopes });
    if (verdict !== 'rejected') return { credentials: { registration: plan.stored }, fresh: false };
    ctx.io.note(
      `The server does not accept plat's registration on port ${listener.port} (it was made for port ${registeredPort ?? 'another'}); registering again.`,
    );
  }
  const registration = await registerClient(await deps(ctx), discovery.as, {
    redirectUri: listener.redirectUri,
    clientName: `plat on ${ctx.hostname()}`,
    now: ctx.now(),
  });
  return { credentials: { registration }, fresh: true };
}

/**
 * Why plat does not try to open a browser here, if it should not: without PLAT_BROWSER/BROWSER, a Linux (or BSD)
 * session without a display, or an SSH session, has no browser the user can see, and `open` would at best start
 * one on a desktop they are not looking at.
 */
export function noLocalBrowser(env: Record<string, string | undefined>, platform: NodeJS.Platform): string | undefined {
  if (env.PLAT_BROWSER || env.BROWSER) return undefined;
  const ssh = Boolean(env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY);
  const wsl = Boolean(env.WSL_DISTRO_NAME || env.WSL_INTEROP);
  const display = Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  if (platform !== 'darwin' && platform !== 'win32' && !wsl && !display) {
    return ssh ? 'this is an SSH session without a display' : 'there is no graphical display';
  }
  if (ssh && !display) return 'this is an SSH session';
  return undefined;
}

async function waitForConsent(
  ctx: Context,
  listener: LoopbackListener,
  stdin: StdinLines,
  url: URL,
  options: LoginOptions,
): Promise<Callback> {
  const { io } = ctx;
  io.err('Open this address in a browser to sign in:');
  io.err(`  ${url.href}`);
  let opened = false;
  if (options.browser) {
    const unavailable = noLocalBrowser(ctx.env, process.platform);
    if (unavailable) {
      io.note(`Not opening a browser: ${unavailable}.`);
    } else {
      const result = await ctx.openUrl(url.href);
      opened = result.opened;
      if (!opened) io.note(`Could not open a browser (${result.reason ?? 'unknown reason'}).`);
    }
  }
  if (!opened) {
    const port = listener.port;
    io.note(
      `If your browser runs on another machine, open the address there and approve. The browser then goes to ${listener.redirectUri}?… ` +
        'and fails to load it (that is expected): copy that address from its address bar, paste it here and press Enter.',
    );
    io.note(
      `Or forward the port first, from the browser's machine: ssh -L ${port}:127.0.0.1:${port} <this host>; the browser then finishes by itself ` +
        `(plat login --port ${port} keeps this port next time).`,
    );
  }
  stdin.onLine((line) => offerPasted(ctx, listener, url, line));
  const spinner = await io.spinner('Waiting for you to approve in the browser… (Ctrl-C to cancel)');
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      listener.callback,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new AuthError(`No answer from the browser within ${options.timeoutSeconds} s. Run plat login again (raise --timeout if you need longer).`)),
          options.timeoutSeconds * 1000,
        );
      }),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(new InterruptedError('Login cancelled.'));
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    spinner.stop();
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A line from stdin while waiting: the address a browser on another machine ended on. It completes the login only
 * if it is this listener's redirect URI with this login's state (then the same iss check and PKCE exchange follow
 * as for the listener); anything else is refused with a hint, and plat keeps waiting.
 */
function offerPasted(ctx: Context, listener: LoopbackListener, authorizationUrl: URL, line: string): void {
  // Terminals and chat tools wrap copied addresses in quotes or angle brackets.
  const text = line.trim().replace(/^["'<]+|["'>]+$/g, '');
  if (!text) return;
  let pasted: URL;
  try {
    pasted = new URL(text);
  } catch {
    ctx.io.warn('That is not a URL. Paste the whole address your browser ended on after approving.');
    return;
  }
  if (listener.offer(pasted)) return;
  if (`${pasted.origin}${pasted.pathname}` === listener.redirectUri) {
    ctx.io.warn('That address does not belong to this login (its state does not match: it is from another attempt, or altered). Paste the address from this attempt.');
  } else if (pasted.hostname === '127.0.0.1' && pasted.pathname === new URL(listener.redirectUri).pathname) {
    ctx.io.warn(`That address is from another login attempt (port ${pasted.port || 80}; this one waits on port ${listener.port}). Paste the address from this attempt.`);
  } else if (pasted.origin === authorizationUrl.origin) {
    ctx.io.warn(`That is the server's page, not where the browser ended. Approve there first, then paste the address it goes to (${listener.redirectUri}?…).`);
  } else {
    ctx.io.warn(`That is not plat's callback address. Paste the address that starts with ${listener.redirectUri}?`);
  }
}

/**
 * A login with a client the server should know got no answer (timeout or Ctrl-C). A server that does not accept
 * the client or its redirect URI shows the browser an error page and never calls back, so plat cannot tell this
 * apart from a user who walked away — except by asking, which it does now, once (bounded: after Ctrl-C the
 * process must still end within seconds). A stored registration the server refuses is dropped, so the next
 * plat login registers anew instead of meeting the same error page.
 */
async function diagnoseNoAnswer(
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
    const { createHttp } = await import('../http.js');
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
    await forgetRegistration(ctx, profile, registration);
    message =
      "The server no longer accepts plat's registration, so the browser showed an error page instead of asking for consent. plat dropped the registration: run plat login again to register anew.";
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
function clientRejected(client: SettledClient, error: ClientRejectedError): AuthError {
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

async function readUser(
  ctx: Context,
  discovery: Discovery,
  credentials: ClientCredentials,
  session: StoredSession,
  known: { subject?: string; resource?: string },
): Promise<ProfileUser | undefined> {
  const fromIdToken = known.subject ? { sub: known.subject } : undefined;
  if (known.resource) {
    // RFC 8707: the token's audience is the API, and UserInfo refuses it (oidc-provider with 403): do not ask.
    ctx.io.note(`The tokens are bound to ${known.resource}, which UserInfo does not accept: plat knows you by your subject only.`);
    return fromIdToken;
  }
  if (!session.scopes.includes('openid') || !discovery.as.userinfo_endpoint) return fromIdToken;
  try {
    const info = await fetchUserInfo(await ctx.http(), discovery.as, session.accessToken, known.subject);
    return toProfileUser(info);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    ctx.io.warn(`Signed in, but could not read your user information: ${(error as Error).message}`);
    return fromIdToken;
  }
}


/** Tokens first (one atomic unit), then the profile that points at them; under the profile's lock. */
async function persist(
  ctx: Context,
  previous: Profile,
  input: {
    baseUrl: string;
    discovery: Discovery;
    registration: ClientRegistration;
    session: StoredSession;
    user: ProfileUser | undefined;
    resource: string | undefined;
  },
): Promise<LoginResult> {
  return ctx.withLock(previous.name, async () => {
    const profiles = await ctx.profiles();
    const current = (await profiles.load(previous.name)) ?? previous;
    const store = await ctx.tokenStore();
    await store.set(current.name, input.session);
    if (current.tokenStore && current.tokenStore !== store.kind) {
      // The session moved (say, the keychain became available): do not leave the old copy behind.
      const old = await ctx.tokenStore(current.tokenStore).catch(() => undefined);
      await old?.delete(current.name).catch(() => {});
    }
    const profile: Profile = {
      ...current,
      baseUrl: input.baseUrl,
      issuer: input.discovery.issuer,
      resource: input.resource,
      client: input.registration,
      user: input.user,
      scopes: input.session.scopes,
      expiresAt: input.session.expiresAt,
      tokenStore: store.kind,
      loggedIn: true,
      updatedAt: ctx.now(),
    };
    await profiles.save(profile);
    return { profile, session: input.session, tokenStoreLocation: store.location };
  });
}

/** Drops the profile's registration, if it is still the one the server refused (another process may have replaced it). */
async function forgetRegistration(ctx: Context, profile: Profile, refused: ClientRegistration): Promise<void> {
  try {
    await ctx.withLock(profile.name, async () => {
      const profiles = await ctx.profiles();
      const current = await profiles.load(profile.name);
      if (current?.client?.clientId === refused.clientId) await profiles.save({ ...current, client: undefined });
    });
  } catch (error) {
    if (error instanceof PlatError) ctx.io.warn(error.message);
    else throw error;
  }
}
