/**
 * Text that crosses a trust boundary on its way to the person: a server-supplied string plat prints itself, and a
 * command plat suggests. A leaf module every layer may use (like errors.ts).
 */

/**
 * C0 controls (ESC, CR, BEL, …), DEL, C1 controls (U+0080–U+009F, among them the one-byte CSI U+009B) and the
 * bidirectional overrides that reorder what a terminal shows (Trojan Source). Any of them in a name, a reason
 * phrase, a header or a metadata value could move the cursor, retitle the window or hide text.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+/g;
const UNSAFE_KEEP_NEWLINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+/g;

/**
 * A server-supplied string made safe to print: unsafe characters become a space, the result is trimmed and bounded
 * (`max` characters, default 200; 0 for no bound). `multiline` keeps line feeds (descriptions of an OpenAPI
 * document), never carriage returns.
 */
export function sanitize(text: unknown, max = 200, options: { multiline?: boolean } = {}): string {
  const s = String(text ?? '')
    .replace(options.multiline ? UNSAFE_KEEP_NEWLINES : UNSAFE, ' ')
    .trim();
  return max > 0 && s.length > max ? `${s.slice(0, max)}…` : s;
}

/** True when the text holds nothing `sanitize` would change (before trimming and bounding). */
export function isPrintable(text: string): boolean {
  return !new RegExp(UNSAFE.source).test(text);
}

/**
 * One shell word that means exactly `arg` to a POSIX shell (bash, zsh, dash): left bare when it holds only
 * characters no shell treats specially, otherwise single-quoted, with each ' written as '\''.
 */
export function shellQuote(arg: string): string {
  if (arg !== '' && /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A command line to print for the person to run: each word shell-quoted and stripped of unsafe characters. */
export function commandLine(words: string[]): string {
  return words.map((word) => shellQuote(sanitize(word, 0))).join(' ');
}

/** Levenshtein distance: the edits between two words, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/**
 * The candidates a mistyped word most likely meant, closest first: a few edits away, or one contains the other
 * (listStudent → listStudents). One rule for every unknown word plat meets (profiles, operations, subcommands).
 */
function closestWords(word: string, candidates: readonly string[], max = 3): string[] {
  const lower = word.toLowerCase();
  return [...new Set(candidates)]
    .map((c) => ({ c, d: editDistance(lower, c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(c.length / 3)) || (lower.length >= 3 && (c.toLowerCase().includes(lower) || lower.includes(c.toLowerCase()))))
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, max)
    .map(({ c }) => c);
}

/** The closest-match sentence every unknown word gets: " Did you mean a or b?", or nothing. */
export function didYouMean(word: string, candidates: readonly string[], max = 3): string {
  const close = closestWords(word, candidates, max);
  return close.length > 0 ? ` Did you mean ${close.join(' or ')}?` : '';
}
