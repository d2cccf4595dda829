/**
 * Opening the consent page. PLAT_BROWSER, then BROWSER, name a command to which the URL is appended as the last
 * argument; otherwise the `open` package picks the platform's opener. Failure to open is not fatal: the URL is
 * always printed, and the caller tells the user to open it by hand.
 */
import { spawn } from 'node:child_process';
import { importPackage } from '../esm.js';

export interface BrowserResult {
  opened: boolean;
  /** Why it could not be opened, for the user. */
  reason?: string;
}

/**
 * Splits a command line the way a POSIX shell splits words: spaces separate, single and double quotes group
 * (also inside a word: --user-data-dir="/tmp/my profile"), a backslash escapes outside single quotes.
 */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < command.length && /["\\$`]/.test(command[i + 1]!)) current += command[++i];
      else current += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < command.length) {
      current += command[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) parts.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) parts.push(current);
  return parts;
}

export async function openUrl(url: string, env: Record<string, string | undefined>): Promise<BrowserResult> {
  const command = env.PLAT_BROWSER || env.BROWSER;
  if (command) return spawnBrowser(splitCommand(command), url);
  try {
    const { default: open } = await importPackage<typeof import('open')>('open');
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
