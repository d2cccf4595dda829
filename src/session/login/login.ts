/**
 * `plat login`: discover → check PKCE, scopes and the client flags → listen on loopback → settle the client (a
 * stored registration, a pre-registered integration, a client ID metadata document, or a new registration) → open
 * the consent page → wait for the callback (or the address pasted on stdin) → exchange the code → store the
 * session → read UserInfo. Nothing is written until tokens are in hand, with one exception: a stored registration
 * the server turned out not to know any more is dropped, so the next login registers anew.
 */
import type { Context } from '../../context.js';
import { AuthError, InterruptedError, UsageError } from '../../errors.js';
import { buildAuthorizationRequest, newLoginSecrets, validateCallback } from '../../oauth/authorize.js';
import { parseClientMetadataUrl } from '../../oauth/client.js';
import type { Discovery } from '../../oauth/discovery.js';
import { assertS256, assertSecureEndpoint } from '../../oauth/endpoints.js';
import { checkScopesSupported, noScopeNamed, parseScopeArgs, scopesForPlan, scopesToRequest, withIdentityScopes, withOfflineAccess } from '../../oauth/scopes.js';
import { ClientRejectedError, exchangeCode } from '../../oauth/tokens.js';
import { ConsentDeniedError, oauthErrorOf } from '../../oauth/errors.js';
import { fetchUserInfo, toProfileUser, UserInfoMissingError, UserInfoRefusedError, UserInfoUnauthorizedError } from '../../oauth/userinfo.js';
import type { Callback, LoopbackListener } from '../../loopback.js';
import type { ClientRegistration, Profile, ProfileUser, StoredSession, TokenStore } from '../../store/types.js';
import type { DpopKey } from '../../oauth/dpop.js';
import { getDiscovery } from '../discovery/discovery-cache.js';
import { nextLineUnlessAborted, readStdinLines, type StdinLines } from './paste.js';
import { noPlatformError, resolveProfile } from '../profile/profile.js';
import { loadSession, type ActiveSession } from '../tokens/access.js';
import { suggestCommand } from '../suggest.js';
import { sanitize, shellQuote } from '../../terminal/text.js';
import { listen, portOf, waitForConsent } from './consent.js';
import type { LoginOptions } from './options.js';
import { clientRejected, type ClientPlan, deps, diagnoseNoAnswer, forgetRegistration, planClient, settleClient, settleDeviceClient } from './client.js';
import { DeviceTargetRefusedError, offersDeviceFlow, type DeviceTokens } from '../../oauth/device.js';
import { waitForDeviceApproval } from './device-flow.js';

export interface LoginResult {
  profile: Profile;
  session: StoredSession;
  tokenStoreLocation: string;
}

export async function login(ctx: Context, options: LoginOptions): Promise<LoginResult> {
  const { io } = ctx;
  // The profile and the platform named for it, worked out together once (a login acts on the profile named, whatever
  // platform it belongs to: it says so itself below).
  const { profile, named } = await resolveProfile(ctx, { replaceDamaged: true, mayBeNew: true });
  // On a terminal, a login that knows no platform asks for it; off one, that is a usage error.
  const baseUrl = named ?? profile.baseUrl ?? (await (await import('./ask-base-url.js')).askBaseUrl(ctx));
  if (!baseUrl) throw noPlatformError();
  const moving = Boolean(profile.baseUrl) && baseUrl !== profile.baseUrl;
  if (moving && !ctx.globals.baseUrl) {
    // An exported PLAT_BASE_URL is ambient: it never moves a profile that belongs to another platform.
    throw new UsageError(
      `Profile ${profile.name} belongs to ${profile.baseUrl}, but PLAT_BASE_URL names ${baseUrl}. ` +
        `Use a profile for ${baseUrl} (plat login --profile <name> --base-url ${shellQuote(baseUrl)}), unset PLAT_BASE_URL to sign in to ${profile.baseUrl}, ` +
        `or move this profile with an explicit ${suggestCommand(ctx, ['login'], { profile: profile.name, baseUrl })}.`,
    );
  }
  // The session being replaced, if any: revoked at its own issuer once the new one is stored, never before.
  const replaced = moving && profile.loggedIn ? await loadSession(ctx, profile).catch(() => undefined) : undefined;
  if (moving && profile.loggedIn) {
    io.note(`Profile ${profile.name} is signed in to ${profile.baseUrl}; signing in to ${baseUrl} replaces that session, which plat then revokes.`);
  }
  // Tokens that cannot be stored are lost after consent: find out before anyone is asked to approve.
  await (await ctx.profiles()).assertWritable(profile.name);
  if (ctx.env.PLAT_TOKEN_STORE?.trim().toLowerCase() === 'keychain') await (await ctx.tokenStore()).assertWritable?.(profile.name);
  const sameServer = profile.baseUrl === baseUrl;
  const added = parseScopeArgs(options.addScope);
  if (added.length > 0 && !(sameServer && profile.scopes)) {
    throw new UsageError(
      sameServer || !profile.baseUrl
        ? `--add-scope adds to an existing session, and profile ${profile.name} has none at ${baseUrl}; run ${suggestCommand(ctx, ['login', '--scope', added.join(',')], { profile: profile.name, baseUrl: profile.baseUrl ? undefined : baseUrl })} instead.`
        : `--add-scope adds to the session of profile ${profile.name} at ${profile.baseUrl}, not at ${baseUrl}; drop --base-url to add scopes there.`,
    );
  }
  const { client: choice } = options;
  const metadataUrl = choice.kind === 'metadata-document' ? parseClientMetadataUrl(choice.url) : undefined;
  let resource = options.resource ?? (sameServer && !profile.resourceByDefault ? profile.resource : undefined);

  const stdin = readStdinLines(io.stdin);
  try {
    const secret = choice.kind === 'registered' && choice.secretOnStdin ? await readSecret(ctx, stdin) : undefined;
    // A login nobody can approve fails now, before anything is discovered or registered, not after --timeout.
    (await import('./finish-ways.js')).assertLoginCanFinish(ctx, options, profile.name, baseUrl);
    // Always read afresh (the cache serves the commands between logins): an API whose authorization server moved
    // names the new one now, and the registration kept for the old one (another issuer) is never presented there.
    const discovery = await getDiscovery(ctx, baseUrl, { refresh: true, resourceMetadata: options.resourceMetadata });
    const stored = profile.client?.issuer === discovery.issuer ? profile.client : undefined;
    const { as } = discovery;
    let scopes = options.forScopes
      ? scopesForPlan(options.forScopes, parseScopeArgs(options.scope), added, sameServer && profile.loggedIn ? profile.scopes : undefined, as.scopes_supported)
      : noScopeNamed([...parseScopeArgs(options.scope), ...added], as.scopes_supported, discovery.resource?.scopes_supported)
        ? []
        : scopesToRequest(parseScopeArgs(options.scope), added, sameServer ? profile.scopes : undefined, as.scopes_supported);
    // Tokens bound to the API (RFC 8707) cannot be replayed at another API of the same server; the MCP
    // authorization specification requires it of clients, and RFC 6749 §3.1 has a server ignore a parameter it does
    // not know. Not sent to a server that refused it before.
    const named = resource === undefined ? namedResource(discovery) : undefined;
    const resourceByDefault = named !== undefined && !(sameServer && profile.resourceRefusedBy === discovery.issuer);
    if (resourceByDefault) resource = named;
    if (options.device && !offersDeviceFlow(as)) {
      throw new UsageError(
        `The authorization server ${discovery.issuer} does not offer the device flow (its metadata names no device_authorization_endpoint). ` +
          `Sign in with the browser instead; from another machine: ${suggestCommand(ctx, ['login', '--no-browser'], { profile: profile.name, baseUrl: profile.baseUrl === baseUrl ? undefined : baseUrl })}, then paste the address the browser ends on, or forward the port it names.`,
      );
    }
    if (!options.device) assertS256(as);
    // An endpoint plat would refuse later is refused before anything is registered or anyone asked to approve.
    assertSecureEndpoint(as, options.device ? 'device_authorization_endpoint' : 'authorization_endpoint');
    assertSecureEndpoint(as, 'token_endpoint');
    checkScopesSupported(scopes, as.scopes_supported);
    scopes = withOfflineAccess(scopes, as.scopes_supported);
    const plan = await planClient(ctx, profile, stored, discovery, choice, { secret, metadataUrl });
    let attempt: Attempt = { profile, baseUrl, discovery, scopes, resource, resourceByDefault, stdin, options, replaced };
    // The retry policy, all of it: a stored registration the token endpoint answers with invalid_client (the one
    // sign plat sees of a server that forgot it) is dropped, and the sign-in runs once more with a new one; a
    // resource plat chose itself that the server refuses (invalid_target) is dropped, said once, and remembered.
    let current = plan;
    let forgotten = false;
    for (;;) {
      try {
        return await signInOnce(ctx, attempt, current);
      } catch (error) {
        if (error instanceof RegistrationForgotten && !forgotten) {
          forgotten = true;
          current = {};
        } else if (error instanceof ResourceRefused && attempt.resourceByDefault) {
          io.note(`The server does not accept the resource indicator ${attempt.resource} (invalid_target); signing in without it, and plat will not send it to this server again.`);
          attempt = { ...attempt, resource: undefined, resourceByDefault: false, resourceRefused: true };
          current = error.plan;
        } else {
          throw error;
        }
      }
    }
  } finally {
    stdin.close();
  }
}

/** What one sign-in attempt needs beyond the client plan; the same for a retry. */
interface Attempt {
  profile: Profile;
  baseUrl: string;
  discovery: Discovery;
  scopes: string[];
  resource: string | undefined;
  /** plat chose `resource` itself; false for --resource (or a profile's), which is never dropped. */
  resourceByDefault: boolean;
  /** The server refused the default resource during this login: remembered with the profile. */
  resourceRefused?: boolean;
  stdin: StdinLines;
  options: LoginOptions;
  replaced: ActiveSession | undefined;
}

/** The server no longer knew the stored registration: it was dropped, and a new attempt may register anew. */
class RegistrationForgotten extends Error {}

/** The server refused the resource plat chose itself (invalid_target); `plan` reuses the client of the attempt. */
class ResourceRefused extends Error {
  constructor(readonly plan: ClientPlan) {
    super('invalid_target');
  }
}

/** invalid_target, from the authorization endpoint (in the callback) or the token endpoint (RFC 8707 §2). */
function refusedTarget(error: unknown, callbackUrl: URL): boolean {
  if (callbackUrl.searchParams.get('error') === 'invalid_target') return true;
  return oauthErrorOf(error)?.error === 'invalid_target' || oauthErrorOf((error as { cause?: unknown } | undefined)?.cause)?.error === 'invalid_target';
}

/** Settle the client, show the code, wait for approval on another device, store the session: one attempt. */
async function signInByDevice(ctx: Context, attempt: Attempt, plan: ClientPlan): Promise<LoginResult> {
  const { profile, baseUrl, discovery, scopes, resource, options, replaced } = attempt;
  const client = await settleDeviceClient(ctx, discovery, plan, scopes);
  const { registration } = client.credentials;
  let tokens: DeviceTokens;
  try {
    const dpop = await loginKey(discovery, options);
    if (dpop) ctx.secrets.remember(String(dpop.jwk.d));
    tokens = await waitForDeviceApproval(ctx, discovery, client.credentials, {
      dpop,
      scopes,
      resource,
      browser: options.browser,
      timeoutSeconds: options.timeoutSeconds,
      again: loginAgain(ctx, profile, baseUrl, options),
    });
  } catch (error) {
    if (attempt.resourceByDefault && error instanceof DeviceTargetRefusedError) {
      throw new ResourceRefused(registration.dynamic ? { stored: registration, storedSecret: client.credentials.secret } : { known: { clientId: registration.clientId, secret: client.credentials.secret } });
    }
    if (oauthErrorOf((error as { cause?: unknown }).cause)?.error === 'invalid_client' && registration.dynamic && !client.fresh) {
      await forgetRegistration(ctx, profile, registration);
      ctx.io.note(`The server no longer recognises plat's registration (invalid_client); registering again and asking once more.`);
      throw new RegistrationForgotten();
    }
    throw error;
  }
  const session: StoredSession = { ...tokens.session, ...(client.credentials.secret ? { clientSecret: client.credentials.secret } : {}) };
  if (resource) {
    session.scopes = withIdentityScopes(session.scopes, scopes, { idToken: Boolean(session.idToken), refreshToken: Boolean(session.refreshToken) });
  }
  ctx.secrets.remember(session.accessToken, session.refreshToken, session.idToken);
  const claims = tokens.idTokenClaims;
  const user = await readUser(ctx, discovery, session, { subject: claims?.sub, claims, resource, explicit: !attempt.resourceByDefault });
  const result = await persist(ctx, profile, {
    baseUrl,
    discovery,
    registration,
    session,
    user,
    resource,
    resourceByDefault: attempt.resourceByDefault,
    resourceRefused: attempt.resourceRefused,
    device: true,
  });
  if (replaced) await revokeReplaced(ctx, replaced);
  return result;
}

/** Listen, settle the client, ask for consent, exchange the code, store the session: one attempt. */
async function signInOnce(ctx: Context, attempt: Attempt, plan: ClientPlan): Promise<LoginResult> {
  if (attempt.options.device) return signInByDevice(ctx, attempt, plan);
  const { io } = ctx;
  const { profile, baseUrl, discovery, scopes, resource, stdin, options, replaced } = attempt;
  const { as } = discovery;
  let listener: LoopbackListener | undefined;
  try {
    const secrets = newLoginSecrets();
    const dpop = await loginKey(discovery, options);
    if (dpop) ctx.secrets.remember(String(dpop.jwk.d));
    listener = await listen(options.port, plan.stored ? portOf(plan.stored.redirectUris[0]) : plan.known?.port, secrets.state);
    const client = await settleClient(ctx, discovery, listener, plan, scopes);
    const { registration } = client.credentials;
    const request = await buildAuthorizationRequest(as, registration, { redirectUri: listener.redirectUri, scopes, resource, ...secrets });

    let callback: Callback;
    try {
      callback = await waitForConsent(ctx, listener, stdin, request.url, {
        browser: options.browser,
        timeoutSeconds: options.timeoutSeconds,
        again: loginAgain(ctx, profile, baseUrl, options),
        deviceOffered: offersDeviceFlow(as),
      });
    } catch (error) {
      if (!client.fresh && (error instanceof InterruptedError || error instanceof AuthError)) {
        await diagnoseNoAnswer(ctx, profile, discovery, client.credentials, { redirectUri: listener.redirectUri, scopes }, error);
      }
      throw error;
    }

    let exchanged: Awaited<ReturnType<typeof exchangeCode>>;
    try {
      const params = validateCallback(as, registration, callback.url, request.state);
      ctx.secrets.remember(params.get('code'), request.codeVerifier);
      exchanged = await exchangeCode(await deps(ctx), as, client.credentials, {
        dpop,
        callbackParams: params,
        redirectUri: request.redirectUri,
        codeVerifier: request.codeVerifier,
        nonce: request.nonce,
        resource,
        requestedScopes: scopes,
        now: ctx.now(),
      });
    } catch (error) {
      if (attempt.resourceByDefault && refusedTarget(error, callback.url)) {
        callback.respond({ ok: false, title: 'One more step', message: 'The server does not accept the resource plat asked for. plat opened a new sign-in without it: see your terminal.' });
        const { secret } = client.credentials;
        throw new ResourceRefused(registration.dynamic ? { stored: registration, storedSecret: secret } : { known: { clientId: registration.clientId, secret, port: listener.port } });
      }
      const retry = error instanceof ClientRejectedError && registration.dynamic && !client.fresh;
      const denied = error instanceof ConsentDeniedError;
      callback.respond(
        retry
          ? { ok: false, title: 'One more step', message: 'The server no longer knew plat. plat registered again and opened a new sign-in: see your terminal.' }
          : denied
            ? { ok: false, title: 'Access denied', message: `You denied plat access to ${platformName(discovery)}, so nothing was signed in. To sign in, run ${loginAgain(ctx, profile, baseUrl, options)} in your terminal and approve.` }
            : { ok: false, title: 'Sign-in failed', message: 'plat could not complete the sign-in. Details are in your terminal.' },
      );
      if (denied) throw new AuthError(`${error.message} To sign in, run ${loginAgain(ctx, profile, baseUrl, options)} and approve.`, { cause: error });
      if (!(error instanceof ClientRejectedError)) throw error;
      if (!retry) throw clientRejected(client, error);
      // invalid_client at the token endpoint is the one sign that plat can see of a server that forgot its
      // registration: drop it, register anew and ask once more.
      await forgetRegistration(ctx, profile, registration);
      io.note(`The server no longer recognises plat's registration (invalid_client); registering again and asking once more.`);
      throw new RegistrationForgotten();
    }
    // What the session stores: the protocol's tokens, and a confidential integration's secret beside them.
    const session: StoredSession = { ...exchanged.session, ...(client.credentials.secret ? { clientSecret: client.credentials.secret } : {}) };
    if (resource) {
      session.scopes = withIdentityScopes(session.scopes, scopes, { idToken: Boolean(exchanged.session.idToken), refreshToken: Boolean(exchanged.session.refreshToken) });
    }
    ctx.secrets.remember(session.accessToken, session.refreshToken, session.idToken);
    // The browser's page waits until the session is stored, so it can say where and as whom, and never says
    // "signed in" for a login that failed at the last step.
    let result: LoginResult;
    try {
      const user = await readUser(ctx, discovery, session, { subject: exchanged.idTokenSubject, claims: exchanged.idTokenClaims, resource, explicit: !attempt.resourceByDefault });
      result = await persist(ctx, profile, { baseUrl, discovery, registration, session, user, resource, resourceByDefault: attempt.resourceByDefault, resourceRefused: attempt.resourceRefused });
    } catch (error) {
      callback.respond({ ok: false, title: 'Sign-in failed', message: 'plat could not complete the sign-in. Details are in your terminal.' });
      throw error;
    }
    callback.respond({
      ok: true,
      title: `Signed in to ${platformName(discovery)}`,
      message: `plat is signed in to ${baseUrl} as ${userName(result.profile.user)}, in the profile ${profile.name}. You can close this tab and return to your terminal.`,
    });
    await listener.close();
    listener = undefined;
    if (replaced) await revokeReplaced(ctx, replaced);
    return result;
  } finally {
    await listener?.close();
  }
}


/** The platform as it names itself (RFC 9728 resource_name), else its host: for the browser page. */
function platformName(discovery: Discovery): string {
  const name = discovery.resource?.resource_name;
  return typeof name === 'string' && sanitize(name, 80) ? sanitize(name, 80) : new URL(discovery.baseUrl).host;
}

/** The account as the server named it (sanitized: the page escapes HTML, this removes control characters). */
function userName(user: ProfileUser | undefined): string {
  if (!user) return 'an account plat could not name';
  const name = sanitize(user.name ?? user.preferredUsername ?? user.sub, 120);
  return user.email ? `${name} <${sanitize(user.email, 120)}>` : name;
}

/** The same login again, as a command that works when pasted: its profile, a base URL not yet remembered, its scopes. */
function loginAgain(ctx: Context, profile: Profile, baseUrl: string, options: LoginOptions): string {
  const args = ['login'];
  if (options.device) args.push('--device');
  for (const scope of parseScopeArgs(options.scope)) args.push('--scope', scope);
  for (const scope of parseScopeArgs(options.addScope)) args.push('--add-scope', scope);
  return suggestCommand(ctx, args, { profile: profile.name, baseUrl: profile.baseUrl === baseUrl ? undefined : baseUrl });
}

/** The API's identifier as its protected-resource metadata names it (RFC 9728 `resource`), if it publishes one. */
function namedResource(discovery: Discovery): string | undefined {
  const resource = discovery.resource?.resource;
  return typeof resource === 'string' && resource ? resource : undefined;
}

/** Best effort: the new session is stored already; a revocation that fails is said, not fatal. */
async function revokeReplaced(ctx: Context, replaced: ActiveSession): Promise<void> {
  const { revokeSession } = await import('../logout.js');
  const { unsupported, errors } = await revokeSession(ctx, replaced);
  if (unsupported) ctx.io.note(`${replaced.profile.baseUrl} offers no revocation: the replaced session's tokens stay valid there until they expire.`);
  for (const message of errors) ctx.io.warn(`Could not revoke the replaced session at ${replaced.profile.baseUrl}: ${message}`);
}

async function readSecret(ctx: Context, stdin: StdinLines): Promise<string> {
  const line = (await nextLineUnlessAborted(stdin, ctx.signal, 'Login cancelled.'))?.trim();
  if (!line) throw new UsageError('--client-secret-stdin expects the client secret on the first line of stdin, and stdin was empty.');
  ctx.secrets.remember(line);
  return line;
}

async function readUser(
  ctx: Context,
  discovery: Discovery,
  session: StoredSession,
  known: { subject?: string; claims?: Record<string, unknown>; resource?: string; explicit: boolean },
): Promise<ProfileUser | undefined> {
  // The ID token's claims (validated by the protocol library) say who signed in even where UserInfo cannot.
  const fromIdToken = known.subject ? toProfileUser({ ...known.claims, sub: known.subject }) : undefined;
  // RFC 8707: a token bound to an API the user named is for that API: UserInfo is not asked (oidc-provider refuses
  // it). Nor without openid (a plain OAuth 2.x session) or an endpoint.
  if (known.resource && known.explicit) {
    ctx.io.note(`The tokens are bound to ${known.resource}, which UserInfo does not accept: plat knows you from the ID token.`);
    return fromIdToken;
  }
  if (!session.scopes.includes('openid') || !discovery.as.userinfo_endpoint) return fromIdToken;
  try {
    const info = await fetchUserInfo(await ctx.http(), discovery.as, session.accessToken, known.subject, session.dpopKey as DpopKey | undefined);
    return toProfileUser(info);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    // The binding plat chose itself: some servers' UserInfo takes such a token (Better Auth), others refuse it
    // (oidc-provider); a refusal is the norm there, and the ID token answers.
    if (known.resource && (error instanceof UserInfoRefusedError || error instanceof UserInfoUnauthorizedError)) return fromIdToken;
    // The documented path guessed for a server whose metadata lists no UserInfo: none there is no news.
    if (error instanceof UserInfoMissingError && discovery.filledFromSpec.includes('userinfo_endpoint')) return fromIdToken;
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
    resourceByDefault: boolean;
    resourceRefused?: boolean;
    /** Signed in with the device flow: a step-up asks the same way. */
    device?: boolean;
  },
): Promise<LoginResult> {
  return ctx.withLock(previous.name, async () => {
    const profiles = await ctx.profiles();
    const current = (await profiles.load(previous.name, { ignoreDamaged: true })) ?? previous;
    // The no-keychain warning is said once per profile: not again when this profile's tokens were in the file
    // already (the profile recorded it at an earlier login).
    const store = await ctx.tokenStore(undefined, { quietFallback: current.loggedIn !== undefined && current.tokenStore === 'file' });
    await store.set(current.name, input.session);
    const dpopJkt = input.session.dpopKey ? await assertKeyKept(store, current.name, input.session.dpopKey as DpopKey) : undefined;
    // A secret kept across a logout is beside the tokens again: the kept copy goes, wherever it was.
    const { dropKeptClientSecret } = await import('../tokens/client-secret.js');
    await dropKeptClientSecret(store, current.name);
    if (current.tokenStore && current.tokenStore !== store.kind) {
      // The session moved (say, the keychain became available): do not leave the old copy behind.
      const old = await ctx.tokenStore(current.tokenStore).catch(() => undefined);
      await old?.delete(current.name).catch(() => {});
      if (old) await dropKeptClientSecret(old, current.name);
    }
    const profile: Profile = {
      ...current,
      baseUrl: input.baseUrl,
      issuer: input.discovery.issuer,
      resource: input.resource,
      resourceByDefault: input.resourceByDefault || undefined,
      loginMethod: input.device ? 'device' : undefined,
      resourceRefusedBy: input.resourceRefused ? input.discovery.issuer : current.baseUrl === input.baseUrl ? current.resourceRefusedBy : undefined,
      client: input.registration,
      user: input.user,
      scopes: input.session.scopes,
      expiresAt: input.session.expiresAt,
      tokenStore: store.kind,
      dpopJkt,
      loggedIn: true,
      sessionEnded: undefined,
      updatedAt: ctx.now(),
    };
    try {
      await profiles.save(profile);
    } catch (error) {
      // A first sign-in whose profile cannot be written must not leave tokens that no profile points to.
      if (!current.loggedIn) await store.delete(current.name).catch(() => {});
      throw error;
    }
    return { profile, session: input.session, tokenStoreLocation: store.location };
  });
}

/**
 * A bound session is only as good as its key: the store must give it back whole. One that kept the tokens but not
 * the key (a keychain entry cut short, say) would leave a token no request could use, so the sign-in fails, said.
 * Returns the key's thumbprint, which the profile records.
 */
async function assertKeyKept(store: TokenStore, name: string, key: DpopKey): Promise<string> {
  const { dpopThumbprint, isUsableDpopKey } = await import('../../oauth/dpop.js');
  const jkt = dpopThumbprint(key);
  const kept = await store.get(name).catch(() => undefined);
  if (!isUsableDpopKey(kept?.dpopKey) || dpopThumbprint(kept.dpopKey) !== jkt) {
    await store.delete(name).catch(() => {});
    throw new AuthError(
      `The token store (${store.location}) did not keep the DPoP key of the new session, so plat stored no session: a bound token cannot be used without its key. ` +
        'Run plat login again with PLAT_TOKEN_STORE=file, or with --no-dpop for bearer tokens.',
    );
  }
  return jkt;
}

/**
 * The key this login's tokens are bound to: made anew (node:crypto) when the authorization server lists
 * dpop_signing_alg_values_supported with an algorithm plat signs with, unless --no-dpop declined it. The
 * authorization server's word alone, as the contract says: the API's protected-resource metadata is no guide (the
 * MCP conformance suite's DPoP server requires bound tokens and its document does not list DPoP).
 */
async function loginKey(discovery: Discovery, options: LoginOptions): Promise<DpopKey | undefined> {
  if (options.dpop === false) return undefined;
  const offered = discovery.as.dpop_signing_alg_values_supported;
  if (!Array.isArray(offered) || offered.length === 0) return undefined;
  const { chooseDpopAlgorithm, makeDpopKey } = await import('../../oauth/dpop.js');
  const alg = chooseDpopAlgorithm(offered);
  return alg ? makeDpopKey(alg) : undefined;
}
