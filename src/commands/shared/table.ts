/** Aligned columns for human output: padded on the plain text first, styled after, so colour never skews them. */
import { sanitize, wrapWords } from '../../terminal/text.js';
import { relative } from './format.js';

export type Style = ((text: string) => string) | undefined;

export interface Fit {
  /** The terminal's width in columns: rows are kept within it (a wrapped row breaks mid-word in its last column). */
  width: number;
  /** The one column that may be cut (with …) or left out to fit, e.g. a summary; never the last (the scopes). */
  shrink: number;
}

/** Below this many characters a shortened column says too little to keep: it is left out instead. */
const MIN_SHRUNK = 12;

const length = (cell: string | undefined) => [...(cell ?? '')].length;

export function table(unsafeRows: string[][], styles: Style[] = [], fit?: Fit): string {
  if (unsafeRows.length === 0) return '';
  // Cells come from servers (paths, summaries, scope names): made safe before they are measured and painted.
  let rows = unsafeRows.map((row) => row.map((cell) => sanitize(cell, 0)));
  if (fit) {
    const before = largest(rows.map((r) => r.length));
    rows = fitted(rows, fit);
    // A column left out takes its style with it, so the others keep theirs.
    if (largest(rows.map((r) => r.length)) < before) styles = styles.filter((_, c) => c !== fit.shrink);
  }
  // Loops, not Math.max(...rows): a description of 200,000 operations would pass more arguments than a call takes.
  const columns = largest(rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => largest(rows.map((r) => length(r[c]))));
  const lastStart = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  return rows
    .map((full) => {
      let end = full.length;
      while (end > 0 && !full[end - 1]) end--;
      const row = full.slice(0, end);
      const cells = row.map((cell, c) => {
        const last = c === row.length - 1;
        const style = styles[c];
        if (last && fit && c === columns - 1) {
          // The last column wraps between its words onto lines of its own, aligned under it.
          const lines = wrapCell(cell, fit.width - lastStart);
          return lines.map((line) => (style && line ? style(line) : line)).join(`\n${' '.repeat(lastStart)}`);
        }
        const padded = last ? cell : cell + ' '.repeat(widths[c]! - length(cell));
        return style && cell ? style(padded) : padded;
      });
      return cells.join('  ');
    })
    .join('\n')
    .concat('\n');
}

/**
 * Rows within `fit.width`: the shrinkable column is cut to what is left once the others have their width, or left
 * out when that is too little to read (the last column then wraps between its words, see table()).
 */
function fitted(rows: string[][], { width, shrink }: Fit): string[][] {
  const columns = largest(rows.map((r) => r.length));
  const widest = (c: number) => largest(rows.map((r) => length(r[c])));
  let others = 0;
  for (let c = 0; c < columns; c++) if (c !== shrink) others += widest(c);
  const room = width - others - 2 * (columns - 1);
  if (widest(shrink) <= room) return rows;
  if (room < MIN_SHRUNK) return rows.map((row) => row.filter((_, c) => c !== shrink));
  return rows.map((row) => row.map((cell, c) => (c === shrink && length(cell) > room ? `${[...cell].slice(0, room - 1).join('')}…` : cell)));
}

/** Words (split at spaces) on lines of at most `room` characters; one line as it is when a word is longer. */
function wrapCell(text: string, room: number): string[] {
  const words = text.split(' ');
  if (length(text) <= room || words.some((word) => length(word) > room)) return [text];
  return wrapWords(words, room);
}

/** The largest of `values` (0 for none), for lists of any length. */
export function largest(values: number[]): number {
  let max = 0;
  for (const v of values) if (v > max) max = v;
  return max;
}

/** "just now" / "3 minutes ago": how old a cached document is. */
export function age(at: number, now: number): string {
  return now - at < 5000 ? 'just now' : relative(at, now);
}
