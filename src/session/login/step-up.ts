/**
 * Step-up that asks (issue 25): on a 403 insufficient_scope naming scopes the session lacks, a person at a terminal
 * is asked whether to sign in again adding them, and the request is made once more. Never in a script: only when
 * stdin and stderr are both terminals, CI is not set, and neither --no-prompt nor PLAT_NO_PROMPT=1 says no. The
 * step-up signs in the way the session was made (the browser, or the device flow) and keeps what it holds.
 */
import type { Context } from '../../context.js';
import { isCI } from '../../terminal/io.js';
import type { BearerChallenge } from '../../oauth/www-authenticate.js';
import { sanitize } from '../../terminal/text.js';
import type { Profile } from '../../store/types.js';

/** RFC 6749 §3.3 scope-token: only such names are offered (they go into a login request). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * What the one step-up path asks for: the scopes a refusal's insufficient_scope challenge names that the session
 * (holding `held`) lacks, when plat may ask a person here (mayAsk); undefined otherwise. The API's refusals come
 * here from the ApiClient (request.ts, `send(request, { stepUp })`), UserInfo's from whoami (userinfo.ts).
 */
export function scopesToAsk(ctx: Context, challenge: BearerChallenge | undefined, held: readonly string[]): string[] | undefined {
  const missing = missingFromChallenge(challenge, held);
  return missing && mayAsk(ctx) ? missing : undefined;
}

function missingFromChallenge(challenge: BearerChallenge | undefined, held: readonly string[]): string[] | undefined {
  if (challenge?.error !== 'insufficient_scope') return undefined;
  const named = (challenge.scope ?? '').trim().split(/\s+/).filter(Boolean);
  if (named.length === 0 || !named.every((s) => SCOPE_TOKEN.test(s))) return undefined;
  const missing = named.filter((s) => !held.includes(s));
  return missing.length > 0 ? missing : undefined;
}

/** The longest scope a question shows; a longer one is not asked for (RFC 6749 sets no bound; a terminal does). */
export const MAX_ASKED_SCOPE = 100;

/** Why `scopes` cannot be asked for (one of them too long to show, or unknown to the server's metadata), if so. */
async function whyNotAsk(ctx: Context, profile: Profile, scopes: string[]): Promise<string | undefined> {
  const long = scopes.find((s) => s.length > MAX_ASKED_SCOPE);
  if (long) return `a scope of ${long.length} characters (${longScopeText(long)}), longer than a question can show whole`;
  if (!profile.baseUrl) return undefined;
  let listed: string[] | undefined;
  try {
    const { getDiscovery } = await import('../discovery/discovery-cache.js');
    const discovery = await getDiscovery(ctx, profile.baseUrl);
    listed = discovery.as.scopes_supported ?? discovery.resource?.scopes_supported;
  } catch {
    // Metadata out of reach now: the sign-in it would start needs it too, and says so there.
    return undefined;
  }
  // A server that lists no scopes leaves nothing to check against (liberal where no secret is at stake).
  const unlisted = Array.isArray(listed) ? scopes.filter((s) => !listed.includes(s)) : [];
  if (unlisted.length > 0) return `${unlisted.join(' ')}, which the server's metadata does not list among its scopes`;
  return undefined;
}

/** A scope too long to show, as an error names it: its start and end, and how long it is. */
export function longScopeText(scope: string): string {
  return `"${sanitize(scope.slice(0, 40), 40)}…${sanitize(scope.slice(-20), 20)}"`;
}

declare const PLAT_PLAIN_BUNDLE: boolean;

/**
 * Whether plat may ask a question here: a person at a terminal, and nobody said not to. Never in dist/plain-<command>.cjs,
 * the scripts' bundle, which carries no login: bin/plat.js does not choose it where a question could be asked
 * (main.ts runsPlainly), and this constant lets esbuild leave the login out of it.
 */
function mayAsk(ctx: Context): boolean {
  if (typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE) return false;
  return ctx.globals.prompt === true && ctx.io.stdinIsTTY && ctx.io.stderrIsTTY && !isCI(ctx.env);
}


/**
 * Asks, and on yes signs in again adding the scopes (plat login --add-scope, the way the session was made).
 * Returns the profile as the sign-in left it, which the caller binds without working it out again; undefined on no
 * (or end of input), which leaves everything as it was.
 */
export async function offerStepUp(ctx: Context, profile: Profile, scopes: string[], what = 'This call'): Promise<Profile | undefined> {
  // A question shows what it asks for, whole: a scope it could not show, or one the server does not list, is not
  // asked for at all (a "y" would grant what the person never read, as a scope cut at 80 characters once hid its
  // ":admin" end). The refusal that follows stands, and this says why no question came.
  const unaskable = await whyNotAsk(ctx, profile, scopes);
  if (unaskable) {
    ctx.io.note(`${what} needs ${unaskable}, so plat does not offer to sign in again adding it.`);
    return undefined;
  }
  const names = scopes.join(' ');
  ctx.io.stderr.write(`${what} needs ${names}. Sign in again adding ${scopes.length > 1 ? 'them' : 'it'}? [y/N] `);
  const { nextLineUnlessAborted, readStdinLines } = await import('./paste.js');
  const stdin = readStdinLines(ctx.io.stdin);
  let answer: string | undefined;
  try {
    answer = await nextLineUnlessAborted(stdin, ctx.signal, 'Cancelled.');
  } finally {
    stdin.close();
  }
  if (!/^\s*y(es)?\s*$/i.test(answer ?? '')) return undefined;
  let signedIn = profile;
  if (!(typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE)) {
    const { login } = await import('./login.js');
    ({ profile: signedIn } = await login(ctx, {
      addScope: scopes,
      browser: true,
      device: profile.loginMethod === 'device',
      client: { kind: 'auto' },
      timeoutSeconds: 300,
    }));
  }
  ctx.io.note(`Signed in again with ${names}; making the request once more.`);
  return signedIn;
}
