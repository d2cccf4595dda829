/**
 * The commands plat suggests in its messages. Each must act on the same session when pasted as printed: it names
 * the profile (unless it is the default) and the base URL when the session's own is not the one plat would find
 * by itself, and every word is shell-quoted, so a value a server chose (a scope name) runs nothing else.
 */
import type { Context } from '../context.js';
import { commandLine } from '../terminal/text.js';

export interface SuggestOptions {
  /** The profile the command must act on; default: the one this invocation uses. */
  profile?: string;
  /** A base URL the command must name (a login to an origin the profile does not remember yet). */
  baseUrl?: string;
  /**
   * The session was made with the device flow (Profile.loginMethod): a login it suggests signs in the same way, for
   * the person over SSH or on a machine without a browser who made it so.
   */
  device?: boolean;
}

export function suggestCommand(ctx: Context, args: string[], options: SuggestOptions = {}): string {
  const profile = options.profile ?? ctx.globals.profile;
  const [command, ...rest] = args;
  const words = ['plat', ...(command ? [command] : [])];
  // Without --profile the command acts on PLAT_PROFILE or the profile plat switch chose, when there is one.
  const implicit = ctx.env.PLAT_PROFILE || ctx.globals.currentProfile || 'default';
  if (profile && (profile !== 'default' || implicit !== 'default')) words.push('--profile', profile);
  if (options.baseUrl) words.push('--base-url', options.baseUrl);
  if (options.device && command === 'login') words.push('--device');
  return commandLine([...words, ...rest]);
}

/** Scopes every login asks for by itself (those the server lists): a hint need not carry them. */
const ASKED_ANYWAY = new Set(['openid', 'profile', 'email', 'offline_access']);

/**
 * The login that gets back the session a profile had: the same profile and the scopes it held, so that pasting it
 * does not sign in with the identity scopes alone and meet exit 5 (and a second browser round) at the next call.
 */
export function loginAgainCommand(ctx: Context, profile: { name: string; scopes?: readonly string[]; loginMethod?: 'device' }): string {
  const own = (profile.scopes ?? []).filter((scope) => !ASKED_ANYWAY.has(scope));
  return suggestCommand(ctx, ['login', ...(own.length > 0 ? ['--scope', own.join(',')] : [])], { profile: profile.name, device: profile.loginMethod === 'device' });
}
