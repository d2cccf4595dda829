/**
 * What a finished API response means for the contract's exit codes: 401 → 4, 403 insufficient_scope → 5 with the
 * step-up command to run, any other status ≥ 400 → 1. The status line and the challenge are server-supplied: they
 * are sanitised, and a scope name goes into a suggested command only when it is a plain RFC 6749 scope token, and
 * then shell-quoted.
 */
import type { Context } from '../context.js';
import { AuthError, ExitCode, PlatError, ScopeError } from '../errors.js';
import { parseBearerChallenge } from '../oauth/www-authenticate.js';
import { sanitize } from '../terminal/text.js';
import type { ApiRequest, ApiResponse } from './request.js';
import { header } from './request.js';
import { longScopeText, MAX_ASKED_SCOPE } from './login/step-up.js';
import { suggestCommand } from './suggest.js';

/** RFC 6749 §3.3 scope-token: %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function responseError(ctx: Context, request: ApiRequest, response: ApiResponse): PlatError | undefined {
  const status = response.status;
  if (status < 400) return undefined;
  const where = `${request.method.toUpperCase()} ${sanitize(request.url.pathname, 120)}`;
  const challenge = parseBearerChallenge(header(response, 'www-authenticate'));
  const token = response.token;
  const profile = token?.kind === 'session' ? token.profile.name : undefined;
  // A session made with the device flow is fixed the same way (the person may have no browser here).
  const device = token?.kind === 'session' && token.profile.loginMethod === 'device';
  if (status === 403 && challenge?.error === 'insufficient_scope') {
    const scopes = (challenge.scope ?? '').trim().split(/\s+/).filter(Boolean);
    const plain = scopes.length > 0 && scopes.every((s) => SCOPE_TOKEN.test(s));
    const named = scopes.map((s) => (s.length > MAX_ASKED_SCOPE ? `${longScopeText(s)} (${s.length} characters)` : `"${sanitize(s, MAX_ASKED_SCOPE)}"`)).join(', ');
    if (request.url.origin !== response.platformOrigin) {
      // Another origin's word about its own scopes: no plat login widens this session for it, and a server that
      // could print "plat login --add-scope" for this profile could steer a person into granting it more.
      const platform = response.platformOrigin ? `; this session's platform is ${response.platformOrigin}, and its token was not sent there` : '';
      return new PlatError(`${sanitize(request.url.origin, 100)} refused ${where} for lack of the scope ${named} (HTTP 403)${platform}. No plat login changes what that server grants.`, ExitCode.failure);
    }
    if (plain && scopes.some((s) => s.length > MAX_ASKED_SCOPE)) {
      return new ScopeError(`${where} needs ${named}, a scope too long to show whole, so plat does not suggest adding it. Ask the platform's administrators what it grants before you sign in with it.`);
    }
    if (!plain) {
      return new ScopeError(
        `${where} needs a scope this session does not have${scopes.length ? ` (the server named ${named}, which is not a valid scope name)` : ''}. See plat scopes, then ${suggestCommand(ctx, ['login'], { profile, device })} --add-scope <scope>.`,
      );
    }
    if (token?.kind === 'session' && scopes.every((s) => token.session.scopes.includes(s))) {
      // Asking again would fail the same way: the server did not grant what plat recorded, or ties it to more.
      return new ScopeError(
        `${where} needs ${named}, which profile ${token.profile.name} was granted at sign-in as far as plat was told, but the server refuses it. ` +
          'The server may not grant that scope to this client or this account: check the account\'s role on the platform, or ask its administrators.',
      );
    }
    return new ScopeError(`${where} needs the scope ${named}, which this session does not have. Run: ${suggestCommand(ctx, ['login', '--add-scope', scopes.join(',')], { profile, device })}`);
  }
  if (status === 401) {
    if (!token && response.signIn) {
      const { baseUrl, resourceMetadata } = response.signIn;
      return new AuthError(
        `${where} needs you to be signed in (HTTP 401); the API names its sign-in metadata at ${sanitize(resourceMetadata, 200)}, which plat will use. Run: ${suggestCommand(ctx, ['login'], { baseUrl })}`,
      );
    }
    if (!token) return new AuthError(`${where} needs you to be signed in (HTTP 401). Run: ${suggestCommand(ctx, ['login'])}`);
    if (token.kind === 'env') return new AuthError(`The server rejected PLAT_TOKEN (HTTP 401) for ${where}. Provide a valid token, or unset PLAT_TOKEN to use the stored session.`);
    const dpop = /\bdpop\b[^]*error\s*=\s*"?(use_dpop_nonce|invalid_dpop_proof)"?(?:[^]*error_description\s*=\s*"([^"]*)")?/i.exec(String(response.headers['www-authenticate'] ?? ''));
    if (dpop?.[1] === 'use_dpop_nonce' && request.replayable === false) {
      // send() answers use_dpop_nonce by sending the request again, which a body read from stdin cannot be.
      return new PlatError(`The platform asked for a DPoP nonce (use_dpop_nonce) for ${where}, and a body read from stdin cannot be sent a second time with it. Send the body from a file instead: --input <file>.`, ExitCode.failure);
    }
    if (dpop?.[1] === 'use_dpop_nonce') {
      return new PlatError(
        `The platform refused ${where} for want of its DPoP nonce (use_dpop_nonce), after plat sent the request once more with the nonce it gave (or could not: a body read from stdin is sent once): plat stopped rather than loop. ` +
          'Try again (a body from a file, --input <file>, can be sent again); if it repeats, the platform is misconfigured.',
        ExitCode.failure,
      );
    }
    if (dpop && /\biat\b|recent|clock|time/i.test(dpop[2] ?? '')) {
      return new AuthError(`The platform refused plat's DPoP proof for its time (invalid_dpop_proof: ${sanitize(dpop[2]!, 200)}) for ${where}: this computer's clock is probably wrong. Set the clock right (NTP), then try again.`);
    }
    if (dpop) return new AuthError(`The platform refused plat's DPoP proof (invalid_dpop_proof${dpop[2] ? `: ${sanitize(dpop[2], 200)}` : ''}) for ${where}. Run: ${suggestCommand(ctx, ['login'], { profile, device })}`);
    return new AuthError(`The server rejected the token even after a refresh (HTTP 401) for ${where}. Run: ${suggestCommand(ctx, ['login'], { profile, device })}`);
  }
  const reason = sanitize(response.statusText, 80);
  return new PlatError(`HTTP ${status}${reason ? ` ${reason}` : ''}: ${where}`, ExitCode.failure);
}
