/**
 * Step-up that asks (issue 25): on a 403 insufficient_scope naming scopes the session lacks, a person at a terminal
 * is asked whether to sign in again adding them, and the request is made once more. Never in a script: only when
 * stdin and stderr are both terminals, CI is not set, and neither --no-prompt nor PLAT_NO_PROMPT=1 says no. The
 * step-up signs in the way the session was made (the browser, or the device flow) and keeps what it holds.
 */
import type { Context } from '../context.js';
import { InterruptedError } from '../errors.js';
import { isCI } from '../io.js';
import { parseBearerChallenge } from '../oauth/www-authenticate.js';
import { sanitize } from '../text.js';
import type { Profile } from '../store/types.js';
import type { ApiResponse } from './request.js';
import { header } from './request.js';

/** RFC 6749 §3.3 scope-token: only such names are offered (they go into a login request). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** The scopes a 403 insufficient_scope names that the response's session lacks; undefined when it is not that. */
export function scopesToStepUp(response: ApiResponse): string[] | undefined {
  if (response.status !== 403 || response.token?.kind !== 'session') return undefined;
  const challenge = parseBearerChallenge(header(response, 'www-authenticate'));
  return missingFromChallenge(challenge, response.token.session.scopes);
}

export function missingFromChallenge(challenge: { error?: string; scope?: string } | undefined, held: readonly string[]): string[] | undefined {
  if (challenge?.error !== 'insufficient_scope') return undefined;
  const named = (challenge.scope ?? '').trim().split(/\s+/).filter(Boolean);
  if (named.length === 0 || !named.every((s) => SCOPE_TOKEN.test(s))) return undefined;
  const missing = named.filter((s) => !held.includes(s));
  return missing.length > 0 ? missing : undefined;
}

declare const PLAT_PLAIN_BUNDLE: boolean;

/**
 * Whether plat may ask a question here: a person at a terminal, and nobody said not to. Never in dist/plain.cjs,
 * the scripts' bundle, which carries no login: bin/plat.js does not choose it where a question could be asked
 * (main.ts runsPlainly), and this constant lets esbuild leave the login out of it.
 */
export function mayAsk(ctx: Context): boolean {
  if (typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE) return false;
  return ctx.globals.prompt === true && ctx.io.stdinIsTTY && ctx.io.stderrIsTTY && !isCI(ctx.env);
}


/**
 * Asks, and on yes signs in again adding the scopes (plat login --add-scope, the way the session was made).
 * Returns whether the session now holds them; no (or end of input) leaves everything as it was.
 */
export async function offerStepUp(ctx: Context, profile: Profile, scopes: string[], what = 'This call'): Promise<boolean> {
  const names = scopes.map((s) => sanitize(s, 80)).join(' ');
  ctx.io.stderr.write(`${what} needs ${names}. Sign in again adding ${scopes.length > 1 ? 'them' : 'it'}? [y/N] `);
  const { readStdinLines } = await import('./paste.js');
  const stdin = readStdinLines(ctx.io.stdin);
  let answer: string | undefined;
  let onAbort: (() => void) | undefined;
  try {
    answer = await Promise.race([
      stdin.next(),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(new InterruptedError('Cancelled.'));
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    stdin.close();
  }
  if (!/^\s*y(es)?\s*$/i.test(answer ?? '')) return false;
  if (!(typeof PLAT_PLAIN_BUNDLE === 'boolean' && PLAT_PLAIN_BUNDLE)) {
    const { login } = await import('./login.js');
    await login(ctx, {
      addScope: scopes,
      browser: true,
      device: profile.loginMethod === 'device',
      client: { kind: 'auto' },
      timeoutSeconds: 300,
    });
  }
  ctx.io.note(`Signed in again with ${names}; making the request once more.`);
  return true;
}
