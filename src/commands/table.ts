/** Aligned columns for human output: padded on the plain text first, styled after, so colour never skews them. */
import { sanitize } from '../text.js';
import { relative } from './format.js';

export type Style = ((text: string) => string) | undefined;

export function table(unsafeRows: string[][], styles: Style[] = []): string {
  if (unsafeRows.length === 0) return '';
  // Cells come from servers (paths, summaries, scope names): made safe before they are measured and painted.
  const rows = unsafeRows.map((row) => row.map((cell) => sanitize(cell, 0)));
  // Loops, not Math.max(...rows): a description of 200,000 operations would pass more arguments than a call takes.
  const columns = largest(rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => largest(rows.map((r) => [...(r[c] ?? '')].length)));
  return rows
    .map((full) => {
      let end = full.length;
      while (end > 0 && !full[end - 1]) end--;
      const row = full.slice(0, end);
      const cells = row.map((cell, c) => {
        const last = c === row.length - 1;
        const padded = last ? cell : cell + ' '.repeat(widths[c]! - [...cell].length);
        const style = styles[c];
        return style && cell ? style(padded) : padded;
      });
      return cells.join('  ');
    })
    .join('\n')
    .concat('\n');
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
