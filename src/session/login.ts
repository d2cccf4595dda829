/**
 * `plat login`: discover → check PKCE and scopes → listen on loopback → register (or reuse) → open the consent
 * page → wait for the callback (or a pasted URL) → exchange the code → store the session → read UserInfo.
 * Nothing is written until tokens are in hand, so every failure before that leaves the profile as it was.
 */
import type { Context } from '../context.js';
import { AuthError, InterruptedError, PlatError, UsageError } from '../errors.js';
import { buildAuthorizationRequest, newLoginSecrets, validateCallback } from '../oauth/authorize.js';
import { registerClient, type ClientCredentials } from '../oauth/client.js';
import { assertS256, type Discovery } from '../oauth/discovery.js';
import { checkScopesSupported, parseScopeArgs, scopesToRequest } from '../oauth/scopes.js';
import { ClientRejectedError, exchangeCode, fetchUserInfo } from '../oauth/tokens.js';
import type { Callback, LoopbackListener } from '../loopback.js';
import type { ClientRegistration, Profile, ProfileUser, StoredSession } from '../store/types.js';
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
  timeoutSeconds: number;
}

export interface LoginResult {
  profile: Profile;
  session: StoredSession;
  tokenStoreLocation: string;
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
  const resource = options.resource ?? (sameServer ? profile.resource : undefined);
  if (resource) validateResource(resource);

  const stdin = readStdinLines(io.stdin);
  let listener: LoopbackListener | undefined;
  try {
    const secret = options.clientSecretStdin ? await readSecret(stdin) : undefined;
    const discovery = await getDiscovery(ctx, baseUrl);
    const { as } = discovery;
    assertS256(as);
    checkScopesSupported(scopes, as.scopes_supported);

    const reuse = reusableRegistration(profile, discovery, options);
    const secrets = newLoginSecrets();
    listener = await listen(options.port, reuse, secrets.state);
    const credentials = await clientFor(ctx, discovery, listener.redirectUri, reuse, options, secret);

    const request = await buildAuthorizationRequest(as, credentials.registration, {
      redirectUri: listener.redirectUri,
      scopes,
      resource,
      ...secrets,
    });
    const callback = await waitForConsent(ctx, listener, stdin, request.url, options);

    let params: URLSearchParams;
    let exchanged: Awaited<ReturnType<typeof exchangeCode>>;
    try {
      params = validateCallback(as, credentials.registration, callback.url, request.state);
      exchanged = await exchangeCode({ fetch: (await ctx.http()).fetch }, as, credentials, {
        callbackParams: params,
        redirectUri: request.redirectUri,
        codeVerifier: request.codeVerifier,
        resource,
        requestedScopes: scopes,
        now: ctx.now(),
      });
    } catch (error) {
      callback.respond({ ok: false, title: 'Sign-in failed', message: 'plat could not complete the sign-in. Details are in your terminal.' });
      if (error instanceof ClientRejectedError) await forgetRegistration(ctx, profile);
      throw error;
    }
    callback.respond({ ok: true, title: 'Signed in to plat', message: 'You can close this tab and return to your terminal.' });
    await listener.close();
    listener = undefined;

    const session = exchanged.session;
    if (secret) session.clientSecret = secret;
    const user = await readUser(ctx, discovery, credentials, session, exchanged.idTokenSubject);
    return await persist(ctx, profile, { baseUrl, discovery, registration: credentials.registration, session, user, resource });
  } finally {
    stdin.close();
    await listener?.close();
  }
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

/** A registration is reused at the same issuer, unless the user names another client. */
function reusableRegistration(profile: Profile, discovery: Discovery, options: LoginOptions): ClientRegistration | undefined {
  const client = profile.client;
  if (!client || client.issuer !== discovery.issuer) return undefined;
  if (options.clientId) return client.clientId === options.clientId ? client : undefined;
  return client.dynamic ? client : undefined;
}

/**
 * Listens on --port, or on the port the reused registration names (so servers that match redirect URIs exactly
 * still accept it), or on any free port.
 */
async function listen(port: number | undefined, reuse: ClientRegistration | undefined, expectedState: string): Promise<LoopbackListener> {
  const { startLoopback } = await import('../loopback.js');
  const registeredPort = reuse?.dynamic ? portOf(reuse.redirectUris[0]) : undefined;
  if (port === undefined && registeredPort) {
    try {
      return await startLoopback({ port: registeredPort, expectedState });
    } catch {
      // taken by something else: any free port does for servers that follow RFC 8252 §7.3
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

async function clientFor(
  ctx: Context,
  discovery: Discovery,
  redirectUri: string,
  reuse: ClientRegistration | undefined,
  options: LoginOptions,
  secret: string | undefined,
): Promise<ClientCredentials> {
  if (options.clientId) {
    return {
      registration: reuse ?? {
        clientId: options.clientId,
        authMethod: secret ? 'client_secret_post' : 'none',
        issuer: discovery.issuer,
        redirectUris: [redirectUri],
        dynamic: false,
        registeredAt: ctx.now(),
      },
      secret,
    };
  }
  if (reuse) return { registration: reuse };
  const registration = await registerClient({ fetch: (await ctx.http()).fetch }, discovery.as, {
    redirectUri,
    clientName: `plat on ${ctx.hostname()}`,
    now: ctx.now(),
  });
  return { registration };
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
    const result = await ctx.openUrl(url.href);
    opened = result.opened;
    if (!opened) io.note(`Could not open a browser (${result.reason ?? 'unknown reason'}).`);
  }
  if (!opened) {
    io.note(
      `If your browser runs on another machine, approve there and paste the address it ends on (http://127.0.0.1:${listener.port}/callback?…) here, then press Enter. ` +
        `Or forward the port: ssh -L ${listener.port}:127.0.0.1:${listener.port} <this host>, with plat login --port ${listener.port}.`,
    );
  }
  stdin.onLine((line) => {
    const text = line.trim();
    if (!text) return;
    let pasted: URL;
    try {
      pasted = new URL(text);
    } catch {
      io.warn('That is not a URL. Paste the whole address your browser ended on after approving.');
      return;
    }
    if (!listener.offer(pasted)) io.warn('That address does not belong to this login (its state does not match). Paste the address from this attempt.');
  });
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

async function readUser(
  ctx: Context,
  discovery: Discovery,
  credentials: ClientCredentials,
  session: StoredSession,
  subject: string | undefined,
): Promise<ProfileUser | undefined> {
  if (!session.scopes.includes('openid') || !discovery.as.userinfo_endpoint) return subject ? { sub: subject } : undefined;
  try {
    const info = await fetchUserInfo({ fetch: (await ctx.http()).fetch }, discovery.as, credentials, session.accessToken, subject);
    return toProfileUser(info);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    ctx.io.warn(`Signed in, but could not read your user information: ${(error as Error).message}`);
    return subject ? { sub: subject } : undefined;
  }
}

export function toProfileUser(info: { sub: string; name?: unknown; email?: unknown; preferred_username?: unknown }): ProfileUser {
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return { sub: info.sub, name: text(info.name), email: text(info.email), preferredUsername: text(info.preferred_username) };
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

async function forgetRegistration(ctx: Context, profile: Profile): Promise<void> {
  if (!profile.client) return;
  try {
    await ctx.withLock(profile.name, async () => {
      const profiles = await ctx.profiles();
      const current = await profiles.load(profile.name);
      if (current && current.client?.clientId === profile.client?.clientId) await profiles.save({ ...current, client: undefined });
    });
  } catch (error) {
    if (error instanceof PlatError) ctx.io.warn(error.message);
  }
}
