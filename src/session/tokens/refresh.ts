/**
 * A session's token, fresh: refreshed when it is about to expire, under the profile's cross-process lock, and the
 * session re-read after taking it, so parallel plat processes cause exactly one refresh (and never replay a rotated
 * refresh token). The rotated tokens reach the store before anything else can fail.
 */
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import type { Profile, StoredSession, TokenStore } from '../../store/types.js';
import { notLoggedIn } from '../no-session.js';
import { loginAgainCommand, suggestCommand } from '../suggest.js';
import { credentialsOf, loadSession, type ActiveSession } from './access.js';
import { endSession } from './end-session.js';
import { noRefreshTokenError, usableUntilExpiry } from './no-refresh-token.js';

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
