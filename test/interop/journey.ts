/**
 * The built CLI's login against an independent server: plat prints the authorization URL on stderr, the test
 * approves it on the server's own pages (approveOnForms) and requests the callback, as home.login does for the
 * reference platform.
 */
import type { Home, PlatResult, RunOptions } from '../helpers/cli.js';
import { approveOnForms } from './consent.js';
import { scaled } from '../helpers/time.js';

export interface InteropLogin {
  result: PlatResult;
  /** The authorization URL plat printed (undefined if it printed none). */
  authorizeUrl?: URL;
}

export async function loginAt(
  home: Home,
  baseUrl: string,
  authorizationEndpoint: string,
  form: Record<string, string>,
  args: string[] = [],
  options: RunOptions = {},
): Promise<InteropLogin> {
  let authorizeUrl: URL | undefined;
  const escaped = authorizationEndpoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(${escaped}\\?\\S+)`);
  const result = await home.run(['login', '--no-browser', '--base-url', baseUrl, ...args], {
    timeoutMs: scaled(30_000),
    ...options,
    onStderr: (stderr, child) => {
      const match = pattern.exec(stderr);
      if (!match || authorizeUrl) return;
      authorizeUrl = new URL(match[1]!);
      void (async () => {
        try {
          const callback = await approveOnForms(match[1]!, form);
          await fetch(callback).then((r) => r.text());
        } catch (error) {
          child.stderr?.emit('data', `\n[test] consent failed: ${(error as Error).message}\n`);
          child.kill('SIGINT');
        }
      })();
    },
  });
  return { result, authorizeUrl };
}
