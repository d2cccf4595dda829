/**
 * The key a DPoP-bound session (RFC 9449) needs: checked each time the session is loaded, before anything uses it.
 */
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import type { Profile, StoredSession, TokenStore } from '../../store/types.js';
import { loginAgainCommand } from '../suggest.js';
import { endSession } from './end-session.js';

/**
 * A DPoP-bound session's key must be there, usable, and the one its tokens are bound to (the profile records the
 * thumbprint). Without it the tokens are worth nothing, and sending them as bearer tokens would undo the binding:
 * the session is ended (exit 4, naming plat login), never used without its key.
 */
export async function assertDpopKey(ctx: Context, profile: Profile, session: StoredSession, store: TokenStore): Promise<void> {
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
