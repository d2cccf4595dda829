/**
 * The stored session's own steps: load it (the token store is the truth; the profile's copies are repaired), refresh
 * it, end it. Refresh runs under the profile's cross-process lock and re-reads the session after taking it, so
 * parallel plat processes cause exactly one refresh (and never replay a rotated refresh token).
 *
 * These steps know nothing of PLAT_TOKEN or of which platform an invocation names, so nothing outside the session
 * calls them: a token is handed out (freshToken) only for a session profile/binding.ts bound (which credentials an
 * invocation may use), through the verbs of the session's front door, session/index.ts.
 */
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import type { ClientCredentials } from '../../oauth/client.js';
import type { Profile, StoredSession, TokenStore } from '../../store/types.js';
import { notLoggedIn } from '../no-session.js';
import { loginAgainCommand, suggestCommand } from '../suggest.js';
import { noRefreshTokenError, usableUntilExpiry } from './no-refresh-token.js';

export interface ActiveSession {
  profile: Profile;
  session: StoredSession;
  store: TokenStore;
}

/** Refresh when the token expires within min(60 s, half its lifetime). */
export function needsRefresh(session: StoredSession, now: number): boolean {
  if (session.expiresAt === undefined) return false;
  const lifetime = Math.max(0, session.expiresAt - session.obtainedAt);
  const margin = Math.min(60_000, lifetime / 2);
  return session.expiresAt - now <= margin;
}

/**
 * Whether the session's token must be refreshed before use: it is about to expire (a session without a refresh
 * token, see no-refresh-token.ts, uses its token to its end instead of refreshing early), or it would not last
 * `minTtlMs` more. One question, asked once per token handed out.
 */
function refreshDue(session: StoredSession, now: number, minTtlMs = 0): boolean {
  if (!lastsAtLeast(session, minTtlMs, now)) return true;
  return needsRefresh(session, now) && !usableUntilExpiry(session, now);
}

/**
 * The stored session of `profile`, as the caller worked it out (profile/binding.ts passes the one it resolved; login
 * and logout the one they act on), or undefined when there is none (no error: callers decide). The profile is never
 * looked up again here.
 *
 * The session (token store) and the profile (config file) are two writes. A plat killed between them leaves the
 * profile's copies of expiry and scopes behind the session, or a profile that says logged in over a session that
 * is gone; the token store is the truth. What is returned follows it, and the profile is repaired on disk under
 * the lock (`locked`: the caller holds it already and saves the profile itself).
 */
export async function loadSession(ctx: Context, p: Profile, options: { locked?: boolean } = {}): Promise<ActiveSession | undefined> {
  if (!p.loggedIn || !p.baseUrl) return undefined;
  const store = await ctx.tokenStore(p.tokenStore);
  let session: StoredSession | undefined;
  try {
    session = await store.get(p.name);
    // A store that cannot tell "gone" from "out of reach" (a locked keychain) throws here instead.
    if (!session) await store.assertWritable?.(p.name);
  } catch (error) {
    // Out of reach is not logged out: exit 4, and the profile stays as it is.
    const { unreachableStoreError } = await import('./store-reach.js');
    throw (await unreachableStoreError(ctx, p, error)) ?? error;
  }
  if (session) ctx.secrets.remember(session.accessToken, session.refreshToken, session.idToken, session.clientSecret);
  // A bound session (RFC 9449) is checked for its key before anything uses it; a bearer one costs nothing more.
  if (session && (session.tokenType === 'DPoP' || session.dpopKey || p.dpopJkt)) await assertDpopKey(ctx, p, session, store);
  const agree = session !== undefined && copiesAgree(p, session);
  if (!agree && !options.locked) await reconcileProfile(ctx, p.name);
  if (!session) return undefined;
  return { profile: agree ? p : { ...p, expiresAt: session.expiresAt, scopes: session.scopes }, session, store };
}

function copiesAgree(profile: Profile, session: StoredSession): boolean {
  const scopes = profile.scopes ?? [];
  return (
    profile.expiresAt === session.expiresAt &&
    scopes.length === session.scopes.length &&
    scopes.every((scope, i) => scope === session.scopes[i])
  );
}

/**
 * Makes the profile agree with the token store again, holding the lock. Best effort: if another plat holds the
 * lock it is a writer that saves the profile itself, and a read-only config dir only keeps the stale copies.
 */
async function reconcileProfile(ctx: Context, name: string): Promise<void> {
  try {
    await ctx.withLock(
      name,
      async () => {
        const profiles = await ctx.profiles();
        const current = await profiles.load(name);
        if (!current?.loggedIn) return;
        const store = await ctx.tokenStore(current.tokenStore);
        const session = await store.get(name);
        if (!session) {
          await store.assertWritable?.(name);
          const { user: _user, expiresAt: _expiresAt, ...rest } = current;
          await profiles.save({ ...rest, loggedIn: false, updatedAt: ctx.now() });
        } else if (!copiesAgree(current, session)) {
          await profiles.save({ ...current, expiresAt: session.expiresAt, scopes: session.scopes, updatedAt: ctx.now() });
        }
      },
      { timeoutMs: 1_000 },
    );
  } catch {
    // the next writer repairs it
  }
}

export function credentialsOf(ctx: Context, active: ActiveSession): ClientCredentials {
  const registration = active.profile.client;
  if (!registration) {
    throw new AuthError(`Profile ${active.profile.name} has no client registration. Run ${suggestCommand(ctx, ['login'], { profile: active.profile.name, device: active.profile.loginMethod === 'device' })} to sign in again.`);
  }
  return { registration, secret: active.session.clientSecret };
}

/** The token is good for at least `minTtlMs` more (a token of unknown expiry counts as good: nothing says otherwise). */
function lastsAtLeast(session: StoredSession, minTtlMs: number, now: number): boolean {
  return session.expiresAt === undefined || session.expiresAt - now >= minTtlMs;
}

/** The session's token, refreshed (under the cross-process lock) when it is about to expire or `force` says so. */
export async function freshToken(ctx: Context, active: ActiveSession, force = false, minTtlMs = 0): Promise<{ kind: 'session'; token: string } & ActiveSession> {
  if (!force && !refreshDue(active.session, ctx.now(), minTtlMs)) return { kind: 'session', token: active.session.accessToken, ...active };
  const refreshed = await refreshSession(ctx, active, { onlyIfUnchanged: true, minTtlMs });
  if (!lastsAtLeast(refreshed.session, minTtlMs, ctx.now())) {
    const left = Math.max(0, Math.floor((refreshed.session.expiresAt! - ctx.now()) / 1000));
    throw new AuthError(
      `The server gave a token that lasts ${left} s, less than the ${Math.ceil(minTtlMs / 1000)} s asked for: ` +
        'it issues no longer-lived tokens. Ask for a shorter minimum lifetime.',
    );
  }
  return { kind: 'session', token: refreshed.session.accessToken, ...refreshed };
}

/**
 * Refreshes under the lock. With `onlyIfUnchanged`, a session another process already rotated (its access token
 * differs from the one we found) is used as is.
 */
export async function refreshSession(
  ctx: Context,
  found: ActiveSession,
  options: { onlyIfUnchanged: boolean; minTtlMs?: number },
): Promise<ActiveSession> {
  return ctx.withLock(found.profile.name, async () => {
    const profiles = await ctx.profiles();
    const profile = (await profiles.load(found.profile.name)) ?? found.profile;
    const current = await loadSession(ctx, profile, { locked: true });
    if (!current) throw notLoggedIn(ctx, profile);
    // Another process's refresh is used only if it also lasts as long as this caller needs.
    const rotatedElsewhere = current.session.accessToken !== found.session.accessToken;
    if (options.onlyIfUnchanged && rotatedElsewhere && lastsAtLeast(current.session, options.minTtlMs ?? 0, ctx.now())) return current;
    if (!current.session.refreshToken) throw noRefreshTokenError(ctx, current.profile, current.session);
    // Loaded only when a refresh happens: a call with a valid token never pays for the protocol library.
    const [{ sessionDiscovery }, { ClientRejectedError, RefreshRejectedError, refreshTokens }] = await Promise.all([
      import('../discovery/session-issuer.js'),
      import('../../oauth/tokens.js'),
    ]);
    const discovery = await sessionDiscovery(ctx, profile);
    let session: StoredSession;
    try {
      const tokens = await refreshTokens({ fetch: (await ctx.http()).fetch, note: ctx.globals.verbose ? (text) => ctx.io.note(text) : undefined }, discovery.as, credentialsOf(ctx, current), {
        previous: current.session,
        resource: profile.resource,
        now: ctx.now(),
      });
      // A confidential integration's secret stays beside the new tokens (refreshTokens keeps what else the session
      // keeps: the refresh token a server did not rotate, the ID token, an API-bound session's identity scopes).
      session = { ...tokens, ...(current.session.clientSecret ? { clientSecret: current.session.clientSecret } : {}) };
    } catch (error) {
      // A dead refresh token ends the session; a network failure (any other error) keeps it for the next try.
      if (error instanceof RefreshRejectedError) {
        await endSession(ctx, current, { ended: 'the server rejected its refresh token' });
        throw new AuthError(`${error.message} Run ${loginAgainCommand(ctx, current.profile)} to sign in again.`, { cause: error });
      }
      if (error instanceof ClientRejectedError) {
        // The client itself is refused: the session cannot be refreshed any more. A registration plat made is
        // forgotten with it (the server forgot it first), so the next login registers anew.
        const client = current.profile.client;
        await endSession(ctx, current, { forgetClient: client?.dynamic === true, ended: 'the server no longer accepts its client' });
        const detail = `invalid_client${error.description ? `: ${error.description}` : ''}`;
        const login = (args: string[]) => suggestCommand(ctx, ['login', ...args], { profile: current.profile.name });
        throw new AuthError(
          client?.dynamic !== false
            ? `The server no longer recognises plat's registration (${detail}), so the session ended. Run ${login([])} to register anew and sign in.`
            : `The server rejected the credentials of the integration ${client.clientId} (${detail}), so the session ended. Sign in again: ${login(['--client-id', client.clientId, ...(client.authMethod === 'client_secret_post' ? ['--client-secret-stdin'] : [])])}`,
          { cause: error },
        );
      }
      throw error;
    }
    ctx.secrets.remember(session.accessToken, session.refreshToken, session.idToken);
    // The session first: the server has already rotated the refresh token, so the new one must reach the disk
    // before anything else can fail.
    const store = await storeRotated(ctx, current, session);
    const updated: Profile = { ...profile, scopes: session.scopes, expiresAt: session.expiresAt, tokenStore: store.kind, updatedAt: ctx.now() };
    await profiles.save(updated);
    return { profile: updated, session, store };
  });
}

/**
 * Stores a refreshed session. The old refresh token is spent, so a keychain that fails now (its bus died, it was
 * locked meanwhile) must not take the session with it: unless PLAT_TOKEN_STORE=keychain forbids it, the session
 * goes to the 0600 file, the documented fallback, and the profile records the move.
 */
async function storeRotated(ctx: Context, current: ActiveSession, session: StoredSession): Promise<TokenStore> {
  try {
    await current.store.set(current.profile.name, session);
    return current.store;
  } catch (error) {
    const [{ KeychainUnavailableError }, { parseTokenStoreEnv }] = await Promise.all([import('../../store/keychain.js'), import('../../store/select.js')]);
    if (!(error instanceof KeychainUnavailableError) || parseTokenStoreEnv(ctx.env.PLAT_TOKEN_STORE) === 'keychain') throw error;
    const file = await ctx.tokenStore('file');
    await file.set(current.profile.name, session);
    ctx.io.warn(
      `The OS keychain failed while plat stored the refreshed session (${error.reason}); it is in ${file.location} (mode 0600) instead, so it is not lost. ` +
        'The next plat login puts it back in the keychain.',
    );
    return file;
  }
}

/**
 * Forgets the tokens but keeps base URL and registration (and a confidential client's secret, in the token store),
 * so the next login needs no flags; `forgetClient` drops the registration and its secret too (the server no longer
 * knows it).
 */
export async function endSession(
  ctx: Context,
  active: Pick<ActiveSession, 'profile' | 'store'> & { session?: StoredSession },
  options: { forgetClient?: boolean; ended?: string } = {},
): Promise<void> {
  const secret = active.session?.clientSecret;
  const { keepClientSecret, dropKeptClientSecret } = await import('./client-secret.js');
  if (secret && !options.forgetClient && active.profile.client?.authMethod === 'client_secret_post') {
    await keepClientSecret(ctx, active.store, active.profile.name, secret);
  } else if (options.forgetClient) {
    await dropKeptClientSecret(active.store, active.profile.name);
  }
  await active.store.delete(active.profile.name);
  const profiles = await ctx.profiles();
  const { user: _user, expiresAt: _expiresAt, client, sessionEnded: _ended, ...rest } = active.profile;
  await profiles.save({
    ...rest,
    ...(options.forgetClient ? {} : { client }),
    ...(options.ended ? { sessionEnded: { at: ctx.now(), reason: options.ended } } : {}),
    loggedIn: false,
    updatedAt: ctx.now(),
  });
}

/**
 * A DPoP-bound session's key must be there, usable, and the one its tokens are bound to (the profile records the
 * thumbprint). Without it the tokens are worth nothing, and sending them as bearer tokens would undo the binding:
 * the session is ended (exit 4, naming plat login), never used without its key.
 */
async function assertDpopKey(ctx: Context, profile: Profile, session: StoredSession, store: TokenStore): Promise<void> {
  const { dpopThumbprint, isUsableDpopKey } = await import('../../oauth/dpop.js');
  const key = session.dpopKey;
  if (key && typeof key.jwk?.d === 'string') ctx.secrets.remember(key.jwk.d);
  const usable = session.tokenType === 'DPoP' && isUsableDpopKey(key) && (!profile.dpopJkt || dpopThumbprint(key) === profile.dpopJkt);
  if (usable) return;
  const what = key ? 'is damaged (it is not the key its tokens are bound to, or not a key plat can sign with)' : 'is missing';
  await endSession(ctx, { profile, store, session }, { ended: `its DPoP key ${key ? 'was damaged' : 'was missing'}` }).catch(() => {});
  throw new AuthError(
    `The DPoP key of profile ${profile.name}'s session ${what} in the token store (${store.location}), so the session has ended: its tokens are bound to that key, and plat never sends them as bearer tokens. ` +
      `Run ${loginAgainCommand(ctx, profile)} to sign in again.`,
  );
}
