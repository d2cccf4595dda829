/**
 * A login that knows no platform asks for it when a person is at the terminal (as gh asks for what is missing);
 * off a terminal it stays a usage error, so a script never hangs on a question.
 */
import { createInterface } from 'node:readline';
import type { Context } from '../../context.js';
import { InterruptedError } from '../../errors.js';
import { parseBaseUrl } from '../base-url.js';

/** The answer as a checked base URL; undefined off a terminal or for an empty answer (the caller then fails). */
export async function askBaseUrl(ctx: Context): Promise<string | undefined> {
  const { io } = ctx;
  if (!io.stdinIsTTY || !io.stderrIsTTY) return undefined;
  // terminal: false: the terminal echoes and edits the line itself, and a paste arrives as typed.
  const rl = createInterface({ input: io.stdin, terminal: false });
  io.stderr.write('Which platform? Its base URL (for example https://school.example.com): ');
  let onAbort: (() => void) | undefined;
  try {
    const answer = await new Promise<string | undefined>((resolve, reject) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(undefined));
      onAbort = () => reject(new InterruptedError('Login cancelled.'));
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
    const text = answer?.trim().replace(/^["'<]+|["'>]+$/g, '');
    return text ? parseBaseUrl(text) : undefined;
  } finally {
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    rl.close();
  }
}
