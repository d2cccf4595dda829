/**
 * A login that knows no platform asks for it when a person is at the terminal (as gh asks for what is missing);
 * off a terminal it stays a usage error, so a script never hangs on a question.
 */
import type { Context } from '../../context.js';
import { parseBaseUrl } from '../profile/base-url.js';
import { nextLineUnlessAborted, readStdinLines } from './paste.js';

/** The answer as a checked base URL; undefined off a terminal or for an empty answer (the caller then fails). */
export async function askBaseUrl(ctx: Context): Promise<string | undefined> {
  const { io } = ctx;
  if (!io.stdinIsTTY || !io.stderrIsTTY) return undefined;
  // Lines read without readline's terminal mode: the terminal echoes and edits the line itself, and a paste arrives
  // as typed.
  const stdin = readStdinLines(io.stdin);
  io.stderr.write('Which platform? Its base URL (for example https://school.example.com): ');
  try {
    const answer = await nextLineUnlessAborted(stdin, ctx.signal, 'Login cancelled.');
    const text = answer?.trim().replace(/^["'<]+|["'>]+$/g, '');
    return text ? parseBaseUrl(text) : undefined;
  } finally {
    stdin.close();
  }
}
