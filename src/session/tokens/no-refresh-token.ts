/**
 * A session without a refresh token: OpenID providers that follow OIDC Core §11 issue one only for offline_access,
 * and some issue none at all. Such a session lasts exactly as long as its access token, and every message about it
 * says so — at login, at `plat refresh`, and when it ends.
 */
import type { Context } from '../../context.js';
import { AuthError, PlatError } from '../../errors.js';
import type { Profile, StoredSession } from '../../store/types.js';
import { loginAgainCommand } from '../suggest.js';

/** "14:05" in local time, with the date when it is not today: the moment a person will look at the clock for. */
export function clockTime(epochMs: number, now: number): string {
  const at = new Date(epochMs);
  const time = `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
  return at.toDateString() === new Date(now).toDateString() ? time : `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, '0')}-${String(at.getDate()).padStart(2, '0')} ${time}`;
}

/** The token of a session that cannot be refreshed is used until it actually expires (not refreshed early). */
export function usableUntilExpiry(session: StoredSession, now: number): boolean {
  return !session.refreshToken && (session.expiresAt === undefined || session.expiresAt > now);
}

/** Said once, at login. */
export function noRefreshTokenNote(session: StoredSession, now: number): string | undefined {
  if (session.refreshToken) return undefined;
  if (session.expiresAt === undefined) return 'This server issued no refresh token: when the token stops working, run plat login again.';
  return `This server issued no refresh token: the session ends at ${clockTime(session.expiresAt, now)}; run plat login again then.`;
}

/** Said at login and refresh when the server's expires_in was past what plat keeps. */
export function cappedLifetimeNote(session: StoredSession): string | undefined {
  if (!session.lifetimeCapped) return undefined;
  return 'The server said the access token lasts longer than a year; plat keeps it as expiring in a year (it refreshes or asks for a login then).';
}

/** Why a session without a refresh token cannot be refreshed, true to whether its token still works. */
export function noRefreshTokenError(ctx: Context, profile: Profile, session: StoredSession): PlatError {
  const now = ctx.now();
  const login = loginAgainCommand(ctx, { name: profile.name, scopes: session.scopes, loginMethod: profile.loginMethod });
  if (session.expiresAt !== undefined && session.expiresAt > now) {
    const minutes = Math.max(1, Math.round((session.expiresAt - now) / 60_000));
    return new PlatError(
      `This server issued no refresh token, so plat cannot refresh the session; the access token is still valid for ${minutes} minute${minutes === 1 ? '' : 's'} (until ${clockTime(session.expiresAt, now)}). Run ${login} when it ends.`,
    );
  }
  const ended = session.expiresAt !== undefined ? ` at ${clockTime(session.expiresAt, now)}` : '';
  return new AuthError(`The session ended${ended}: this server issued no refresh token, so plat cannot renew it. Run ${login} to sign in again.`);
}
