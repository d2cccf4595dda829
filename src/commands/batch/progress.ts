/**
 * plat batch's progress line on a terminal's stderr, redrawn four times a second from the start of the check pass
 * to the end of the run. It is cleared before anything else reaches the terminal (a result line on the same
 * terminal's stdout, a warning), so no text is ever glued behind it.
 */
import type { Context } from '../../context.js';

export interface Progress {
  /** What the line says from now on. */
  show(text: () => string): void;
  /** Wipes the line (when drawn) so the next text starts at the margin; the next tick draws it again. */
  clear(): void;
  stop(): void;
}

const EVERY_MS = 250;

export function startProgress(ctx: Context): Progress {
  let text: () => string = () => '';
  let drawn = false;
  const draw = () => {
    const line = text();
    if (!line) return;
    ctx.io.stderr.write(`\r\x1b[2K${line}`);
    drawn = true;
  };
  const timer = setInterval(draw, EVERY_MS);
  const clear = () => {
    if (!drawn) return;
    ctx.io.stderr.write('\r\x1b[2K');
    drawn = false;
  };
  return {
    show(next) {
      text = next;
      // Drawn at once: a person sees what plat is doing from the start, not after the first tick.
      draw();
    },
    clear,
    stop() {
      clearInterval(timer);
      clear();
    },
  };
}
