/**
 * Refresh, revocation and UserInfo go only to the issuer that issued the session. When the platform's metadata now
 * names another authorization server, no token is sent anywhere until the person signs in again and so says they
 * trust the new one (RFC 9700 §4.4: a client must not hand one server's tokens to another). The metadata and the
 * check come together, so no step that sends a session's token can read the one without the other.
 */
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import type { Discovery } from '../../oauth/discovery.js';
import type { Profile } from '../../store/types.js';
import { suggestCommand } from '../suggest.js';
import { getDiscovery } from './discovery-cache.js';

/**
 * The metadata of the platform `profile`'s session was issued at (`baseUrl`: the platform the caller bound it to,
 * the profile's own unless said), refused when it names another issuer now.
 */
export async function sessionDiscovery(ctx: Context, profile: Profile, baseUrl = profile.baseUrl!): Promise<Discovery> {
  const discovery = await getDiscovery(ctx, baseUrl);
  if (!profile.issuer || profile.issuer === discovery.issuer) return discovery;
  throw new AuthError(
    `The platform ${profile.baseUrl} now names another authorization server (${profile.issuer} → ${discovery.issuer}), so plat sent it no token. ` +
      `Run ${suggestCommand(ctx, ['login'], { profile: profile.name })} to trust it.`,
  );
}
