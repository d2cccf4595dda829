import { closestWords } from '../terminal/text.js';
import { UsageError } from '../errors.js';

export const DEFAULT_SCOPES = ['openid', 'profile', 'email'];

/** `--scope` may repeat and each value may hold a space- or comma-separated list. */
export function parseScopeArgs(values: readonly string[] | undefined): string[] {
  const scopes = (values ?? []).flatMap((v) => v.split(/[\s,]+/)).filter(Boolean);
  return [...new Set(scopes)];
}

/**
 * The identity scopes plat asks for by default: those the server lists, or all of them when it lists no scopes
 * at all. A plain OAuth 2.x server (no OpenID Provider) lists none of them, and is asked for none: asking for a
 * scope a server does not offer can fail the whole request (RFC 6749 §3.3), and openid from a server that issues
 * no ID token buys nothing.
 */
function identityScopes(supported: readonly string[] | undefined): string[] {
  return supported && supported.length > 0 ? DEFAULT_SCOPES.filter((s) => supported.includes(s)) : DEFAULT_SCOPES;
}

/** Whether the server takes openid: it lists it, or lists no scopes at all. */
function offersOpenId(supported: readonly string[] | undefined): boolean {
  return !supported || supported.length === 0 || supported.includes('openid');
}

/**
 * The scopes to request: the identity scopes the server offers (openid first) with whatever --scope adds to them,
 * as gh's --scopes adds to its minimum; the union for step-up (and openid there too, where offered).
 */
export function scopesToRequest(requested: string[], added: string[], granted: string[] | undefined, supported?: readonly string[]): string[] {
  const defaults = identityScopes(supported);
  const base = added.length > 0 ? [...(granted ?? defaults), ...requested, ...added] : [...defaults, ...requested];
  return [...new Set([...(offersOpenId(supported) ? ['openid'] : []), ...base])];
}

/**
 * RFC 6749 §3.3 (and the MCP authorization specification): with no scope named anywhere — none asked for, and
 * neither the authorization server nor the API's protected-resource document lists any — `scope` is left out of
 * the request and the server applies its default, rather than plat guessing openid profile email at a server that
 * may know none of them.
 */
export function noScopeNamed(asked: readonly string[], ...listed: Array<readonly string[] | undefined>): boolean {
  return asked.length === 0 && listed.every((list) => !Array.isArray(list) || list.length === 0);
}

/**
 * `--for`: exactly the scopes the operations need plus openid where the server offers it (and whatever
 * --scope/--add-scope name beside it); with a session on the same server, on top of the scopes it holds, as
 * --add-scope does.
 */
export function scopesForPlan(planned: string[], requested: string[], added: string[], granted: string[] | undefined, supported?: readonly string[]): string[] {
  return [...new Set([...(offersOpenId(supported) ? ['openid'] : []), ...(granted ?? []), ...planned, ...requested, ...added])];
}

const IDENTITY_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

/**
 * The scopes of a session whose access token is bound to an API (RFC 8707): the token response names the API's
 * scopes only (the token's audience is the API), while the identity scopes asked for were granted to the ID token
 * (and offline_access to the refresh token). Those stay with the session, so status and a later step-up see them.
 * `identityGranted`: the answer proved it (an ID token, or a refresh token for offline_access).
 */
export function withIdentityScopes(granted: string[], asked: readonly string[], identityGranted: { idToken: boolean; refreshToken: boolean }): string[] {
  const kept = asked.filter(
    (s) => IDENTITY_SCOPES.includes(s) && !granted.includes(s) && (s === 'offline_access' ? identityGranted.refreshToken : identityGranted.idToken),
  );
  return kept.length > 0 ? [...kept, ...granted] : granted;
}

/**
 * OIDC Core §11: most OpenID providers issue a refresh token only for `offline_access`. It is asked for when the
 * server lists it, and never otherwise (a server that does not list it may refuse the whole request).
 */
export function withOfflineAccess(scopes: string[], supported: readonly string[] | undefined): string[] {
  if (!supported?.includes('offline_access') || scopes.includes('offline_access')) return scopes;
  return [...scopes, 'offline_access'];
}

/**
 * The scopes plat registers (RFC 7591 `scope`): those asked for now, and the defaults a later plain `plat login`
 * asks for (those the server lists), so that login needs no new registration. Asking for more than this later
 * registers anew (some servers hold a client to the scopes it registered).
 */
export function scopesToRegister(asked: string[], supported: readonly string[] | undefined): string[] {
  return [...new Set([...asked, ...identityScopes(supported)])];
}

/** Refuses scopes the server does not list, naming the closest ones it does. A server that lists none is trusted. */
export function checkScopesSupported(scopes: string[], supported: readonly string[] | undefined): void {
  if (!supported || supported.length === 0) return;
  const unknown = scopes.filter((s) => !supported.includes(s));
  if (unknown.length === 0) return;
  const parts = unknown.map((s) => {
    const close = closestWords(s, supported);
    return close.length > 0 ? `"${s}" (did you mean ${close.map((c) => `"${c}"`).join(' or ')}?)` : `"${s}"`;
  });
  throw new UsageError(
    `The server does not offer the scope${unknown.length > 1 ? 's' : ''} ${parts.join(', ')}. Run \`plat scopes\` to list the ones it offers.`,
  );
}

export function formatScopes(scopes: readonly string[]): string {
  return scopes.length > 0 ? scopes.join(' ') : '(none)';
}
