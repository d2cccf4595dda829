/**
 * Why an invocation has no session to use, and what plat tells the person about it: the exit-4 errors and the note
 * for a call that goes out anonymously, each with the ways out. The binding (profile/binding.ts) decides that there
 * is none and why; the refresh (tokens/refresh.ts) finds a session gone under the lock; the request path
 * (request.ts) says so once per client. They all hand over what they worked out (the profile, the platform named)
 * and nothing here reads the profile file or the token store again.
 */
import type { Context } from '../context.js';
import { AuthError } from '../errors.js';
import type { Profile } from '../store/types.js';
import { loginAgainCommand, suggestCommand } from './suggest.js';

/**
 * `not-logged-in`: nothing stored. `other-platform`: the profile is signed in to another base URL than the one
 * named. `ended`: the session ended without the user's word; only plat login or plat logout clears that.
 */
type NoSession = 'not-logged-in' | 'other-platform' | 'ended';

/** An invocation bound to no session: its profile, the platform it talks to, and why it has none. */
export interface Unbound {
  kind: 'none';
  reason: NoSession;
  baseUrl: string | undefined;
  profile: Profile;
  /** For `other-platform`: the profiles signed in to the platform named, or else a name for a new one there. */
  elsewhere?: { holders: string[]; newProfile: string };
}

/** The exit-4 error for a command that needs a session and has none, with the ways out. */
export function noSessionError(ctx: Context, binding: Unbound): AuthError {
  const { profile, baseUrl } = binding;
  const name = profile.name;
  if (binding.reason === 'other-platform') {
    return new AuthError(`Profile ${name} is signed in to ${profile.baseUrl}, not to ${baseUrl}, so its tokens are not used there. ${otherWay(ctx, binding)}`);
  }
  if (binding.reason === 'ended') {
    const ended = profile.sessionEnded!;
    return new AuthError(
      `The session of profile ${name} at ${profile.baseUrl} ended: ${ended.reason}. ` +
        `Sign in again with ${loginAgainCommand(ctx, profile)}, or run ${suggestCommand(ctx, ['logout'], { profile: name })} to use the platform anonymously.`,
    );
  }
  return notLoggedIn(ctx, profile, baseUrl);
}

/** `baseUrl`: the platform named for this invocation, if any; the suggested login names it when the profile has none. */
export function notLoggedIn(ctx: Context, profile: Profile | undefined, baseUrl?: string): AuthError {
  const name = profile?.name ?? ctx.globals.profile;
  const login = profile?.baseUrl
    ? suggestCommand(ctx, ['login'], { profile: name })
    : baseUrl
      ? suggestCommand(ctx, ['login'], { profile: name, baseUrl })
      : `${suggestCommand(ctx, ['login'], { profile: name })} --base-url <url>`;
  return new AuthError(`Not logged in${name === 'default' ? '' : ` (profile ${name})`}. Run: ${login}`);
}

/** A one-line note for a call that goes out without the session's token, saying why. */
export function anonymousNote(ctx: Context, binding: Unbound): string {
  if (binding.reason === 'other-platform') {
    return `Profile ${binding.profile.name} is signed in to ${binding.profile.baseUrl}, not ${binding.baseUrl}: calling ${binding.baseUrl} anonymously. ${otherWay(ctx, binding)}`;
  }
  return `Not logged in: calling anonymously. Run ${suggestCommand(ctx, ['login'], { profile: binding.profile.name, baseUrl: binding.profile.baseUrl ? undefined : binding.baseUrl })} to call as yourself.`;
}

/** How to act as yourself at the other platform: the profiles signed in there, or a login under a new profile. */
function otherWay(ctx: Context, binding: Unbound): string {
  const { holders = [], newProfile = binding.profile.name } = binding.elsewhere ?? {};
  if (holders.length > 0) {
    return `${holders.length === 1 ? `Profile ${holders[0]} is` : `Profiles ${holders.join(', ')} are`} signed in there: use --profile ${holders[0]}.`;
  }
  return `No profile is signed in there; sign in to it under a profile of its own: ${suggestCommand(ctx, ['login'], { profile: newProfile, baseUrl: binding.baseUrl })}`;
}
