/**
 * How a login can finish, decided before anything is discovered, registered or listened for: a browser plat opens
 * on this machine; a person at a terminal who sees the address (and opens it, or pastes where the browser ended);
 * a browser elsewhere that reaches the listener through a forwarded --port; or the address pasted on stdin from a
 * pipe something writes to. A run with none of them (CI=true, no display, stderr a log, stdin from /dev/null) would
 * wait out --timeout and register a client on every attempt: it fails at once instead, naming the ways that work.
 * `--device` always counts: its code may be read and typed on any device, wherever plat's stderr is shown.
 */
import { fstatSync } from 'node:fs';
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import { isCI } from '../../terminal/io.js';
import { noLocalBrowser } from './consent.js';
import type { LoginOptions } from './options.js';
import { suggestCommand } from '../suggest.js';

export type FinishWay = 'device' | 'browser' | 'terminal' | 'forwarded-port' | 'paste';

type WayOptions = Pick<LoginOptions, 'browser' | 'port' | 'device'>;

export function waysToFinish(ctx: Context, options: WayOptions): FinishWay[] {
  const ways: FinishWay[] = [];
  if (options.device) ways.push('device');
  if (options.browser && !noBrowserHere(ctx)) ways.push('browser');
  if (ctx.io.stderrIsTTY) ways.push('terminal');
  if (options.port !== undefined) ways.push('forwarded-port');
  if (canPaste(ctx)) ways.push('paste');
  return ways;
}

/** Fails (exit 4) when the login could only wait for its timeout. */
export function assertLoginCanFinish(ctx: Context, options: WayOptions, profile: string, baseUrl: string): void {
  if (waysToFinish(ctx, options).length > 0) return;
  const why = [
    options.browser ? (noBrowserHere(ctx) ?? 'no browser') : '--no-browser',
    'no terminal shows the address',
    'stdin is not a pipe to paste the address into',
  ].join(', ');
  throw new AuthError(
    `This login cannot finish here: nobody can approve it (${why}), so plat did not start it. ` +
      `For CI and jobs, pass a token in PLAT_TOKEN (plat uses it instead of a session, never stores it); ` +
      `to keep a session on this machine, sign in from a terminal (${suggestCommand(ctx, ['login'], { profile, baseUrl })}), ` +
      `use the device flow where the server offers it (${suggestCommand(ctx, ['login', '--device'], { profile, baseUrl })}: a code to type on any device), ` +
      `or approve from a browser on another machine with ${suggestCommand(ctx, ['login', '--no-browser', '--port', '8765'], { profile, baseUrl })} and ssh -L 8765:127.0.0.1:8765 to this host.`,
  );
}

/**
 * Why no browser on this machine can be used: none a person can see, or a CI run (nobody watches a runner's desktop)
 * unless PLAT_BROWSER/BROWSER names one that approves by itself.
 */
function noBrowserHere(ctx: Context): string | undefined {
  const why = noLocalBrowser(ctx.env, process.platform);
  if (why) return why;
  if (isCI(ctx.env) && !ctx.env.PLAT_BROWSER && !ctx.env.BROWSER) return 'CI is set, and no one sees a browser on a CI runner';
  return undefined;
}

/**
 * A terminal, or a pipe or socket (another program may write the address): yes. /dev/null, a file, or a closed
 * descriptor: no. A stream that is not a process descriptor (the library, tests) is given the benefit of the doubt.
 */
function canPaste(ctx: Context): boolean {
  const stdin = ctx.io.stdin as { fd?: unknown; isTTY?: boolean };
  if (stdin.isTTY) return true;
  if (typeof stdin.fd !== 'number') return true;
  try {
    const stat = fstatSync(stdin.fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}
