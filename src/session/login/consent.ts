/**
 * The person's part of a login: the one-shot loopback listener (on the port a registration remembers, when it is
 * free), opening the consent page or explaining how to finish from another machine, and waiting for the callback
 * or a pasted address, within --timeout and Ctrl-C.
 */
import type { Context } from '../../context.js';
import { AuthError, InterruptedError } from '../../errors.js';
import type { Callback, LoopbackListener } from '../../loopback.js';
import type { StdinLines } from './paste.js';
import type { LoginOptions } from './options.js';

/**
 * Listens on --port, or on the port the stored client used last (so servers that match redirect URIs exactly
 * still accept it), or on any free port.
 */
export async function listen(port: number | undefined, lastPort: number | undefined, expectedState: string): Promise<LoopbackListener> {
  const { startLoopback } = await import('../../loopback.js');
  if (port === undefined && lastPort) {
    try {
      return await startLoopback({ port: lastPort, expectedState });
    } catch {
      // taken by something else: for a stored registration, settleClient finds out whether another port is accepted
    }
  }
  return startLoopback({ port, expectedState });
}

export function portOf(uri: string | undefined): number | undefined {
  if (!uri) return undefined;
  try {
    const port = Number(new URL(uri).port);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why plat does not try to open a browser here, if it should not: without PLAT_BROWSER/BROWSER, a Linux (or BSD)
 * session without a display, or an SSH session, has no browser the user can see, and `open` would at best start
 * one on a desktop they are not looking at.
 */
export function noLocalBrowser(env: Record<string, string | undefined>, platform: NodeJS.Platform): string | undefined {
  if (env.PLAT_BROWSER || env.BROWSER) return undefined;
  const ssh = Boolean(env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY);
  const wsl = Boolean(env.WSL_DISTRO_NAME || env.WSL_INTEROP);
  const display = Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  if (platform !== 'darwin' && platform !== 'win32' && !wsl && !display) {
    return ssh ? 'this is an SSH session without a display' : 'there is no graphical display';
  }
  if (ssh && !display) return 'this is an SSH session';
  return undefined;
}

export async function waitForConsent(
  ctx: Context,
  listener: LoopbackListener,
  stdin: StdinLines,
  url: URL,
  options: Pick<LoginOptions, 'browser' | 'timeoutSeconds'> & { again: string; deviceOffered?: boolean },
): Promise<Callback> {
  const { io } = ctx;
  // The address is always printed; what is said around it depends on whether plat opened it itself.
  let opened = false;
  let why: string | undefined;
  if (options.browser) {
    const unavailable = noLocalBrowser(ctx.env, process.platform);
    if (unavailable) {
      why = `Not opening a browser: ${unavailable}.`;
    } else {
      const result = await ctx.openUrl(url.href);
      opened = result.opened;
      if (!opened) why = `Could not open a browser (${result.reason ?? 'unknown reason'}).`;
    }
  }
  io.err(opened ? 'Opened this address in your browser to sign in:' : 'Open this address in a browser to sign in:');
  io.err(`  ${url.href}`);
  if (why) io.note(why);
  if (!opened) {
    const port = listener.port;
    io.note(
      `If your browser runs on another machine, open the address there and approve. The browser then goes to ${listener.redirectUri}?… ` +
        'and fails to load it (that is expected): copy that address from its address bar, paste it here and press Enter.',
    );
    io.note(
      `Or forward the port first, from the browser's machine: ssh -L ${port}:127.0.0.1:${port} <this host>; the browser then finishes by itself ` +
        `(plat login --port ${port} keeps this port next time).`,
    );
    // RFC 8628: where the server offers it, a code typed on any device is the simpler way from a remote shell.
    if (options.deviceOffered) io.note(`Or sign in with a code on any device instead: ${options.again} --device`);
  }
  stdin.onLine((line) => offerPasted(ctx, listener, url, line));
  // A spinner redraws its line many times a second, over whatever is typed there: only while a browser plat opened
  // does the work. Without one, the person may be pasting an address, so the line stays still.
  const spinner = opened
    ? await io.spinner('Waiting for you to approve in the browser… (Ctrl-C to cancel)')
    : (io.note('Waiting for the sign-in to finish… (Ctrl-C to cancel)'), { stop() {} });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      listener.callback,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(
              new AuthError(
                `No answer from the browser within ${options.timeoutSeconds} s. Run ${options.again} again (add --timeout <seconds> if you need longer than ${options.timeoutSeconds}).`,
              ),
            ),
          options.timeoutSeconds * 1000,
        );
      }),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(new InterruptedError('Login cancelled.'));
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    spinner.stop();
    clearTimeout(timer);
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A line from stdin while waiting: the address a browser on another machine ended on. It completes the login only
 * if it is this listener's redirect URI with this login's state (then the same iss check and PKCE exchange follow
 * as for the listener); anything else is refused with a hint, and plat keeps waiting.
 */
function offerPasted(ctx: Context, listener: LoopbackListener, authorizationUrl: URL, line: string): void {
  // Terminals and chat tools wrap copied addresses in quotes or angle brackets.
  const text = line.trim().replace(/^["'<]+|["'>]+$/g, '');
  if (!text) return;
  let pasted: URL;
  try {
    pasted = new URL(text);
  } catch {
    ctx.io.warn('That is not a URL. Paste the whole address your browser ended on after approving.');
    return;
  }
  if (listener.offer(pasted)) return;
  if (`${pasted.origin}${pasted.pathname}` === listener.redirectUri) {
    ctx.io.warn('That address does not belong to this login (its state does not match: it is from another attempt, or altered). Paste the address from this attempt.');
  } else if (pasted.hostname === '127.0.0.1' && pasted.pathname === new URL(listener.redirectUri).pathname) {
    ctx.io.warn(`That address is from another login attempt (port ${pasted.port || 80}; this one waits on port ${listener.port}). Paste the address from this attempt.`);
  } else if (pasted.origin === authorizationUrl.origin) {
    ctx.io.warn(`That is the server's page, not where the browser ended. Approve there first, then paste the address it goes to (${listener.redirectUri}?…).`);
  } else {
    ctx.io.warn(`That is not plat's callback address. Paste the address that starts with ${listener.redirectUri}?`);
  }
}
