/**
 * Opening the consent page. PLAT_BROWSER, then BROWSER, name a command to which the URL is appended as the last
 * argument; otherwise the `open` package picks the platform's opener. Failure to open is not fatal: the URL is
 * always printed, and the caller tells the user to open it by hand.
 */
import { spawn } from 'node:child_process';

export interface BrowserResult {
  opened: boolean;
  /** Why it could not be opened, for the user. */
  reason?: string;
}

/** Splits a command line the way a user writes it in an environment variable: spaces, with simple quoting. */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of command.matchAll(re)) parts.push(m[1] ?? m[2] ?? m[3] ?? '');
  return parts;
}

export async function openUrl(url: string, env: Record<string, string | undefined>): Promise<BrowserResult> {
  const command = env.PLAT_BROWSER || env.BROWSER;
  if (command) return spawnBrowser(splitCommand(command), url);
  try {
    const { default: open } = await import('open');
    const child = await open(url, { wait: false });
    return await new Promise<BrowserResult>((resolve) => {
      child.once('error', (error) => resolve({ opened: false, reason: error.message }));
      // `open` resolves once the opener is spawned; an opener that is missing fails almost at once.
      child.once('exit', (code) => resolve(code ? { opened: false, reason: `the opener exited with ${code}` } : { opened: true }));
      setTimeout(() => resolve({ opened: true }), 300).unref();
    });
  } catch (error) {
    return { opened: false, reason: (error as Error).message };
  }
}

function spawnBrowser(argv: string[], url: string): Promise<BrowserResult> {
  const [file, ...args] = argv;
  if (!file) return Promise.resolve({ opened: false, reason: 'the browser command is empty' });
  return new Promise((resolve) => {
    const child = spawn(file, [...args, url], { stdio: 'ignore', detached: true });
    child.once('error', (error) => resolve({ opened: false, reason: `${file}: ${error.message}` }));
    child.once('spawn', () => {
      child.unref();
      resolve({ opened: true });
    });
  });
}
