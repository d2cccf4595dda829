/** Aligned columns for human output: padded on the plain text first, styled after, so colour never skews them. */
import { relative } from './format.js';

export type Style = ((text: string) => string) | undefined;

export function table(rows: string[][], styles: Style[] = []): string {
  if (rows.length === 0) return '';
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...rows.map((r) => [...(r[c] ?? '')].length)));
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

/** "just now" / "3 minutes ago": how old a cached document is. */
export function age(at: number, now: number): string {
  return now - at < 5000 ? 'just now' : relative(at, now);
}
