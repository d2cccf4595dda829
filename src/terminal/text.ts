/**
 * Text that crosses a trust boundary on its way to the person: a server-supplied string plat prints itself, and a
 * command plat suggests. A leaf module every layer may use (like errors.ts).
 */

/**
 * C0 controls (ESC, CR, BEL, …), DEL, C1 controls (U+0080–U+009F, among them the one-byte CSI U+009B), every
 * bidirectional control that reorders what a terminal shows (Trojan Source: the embeddings and overrides
 * U+202A–U+202E, the isolates U+2066–U+2069, and the marks U+200E, U+200F and U+061C) and the Unicode line and
 * paragraph separators. Any of them in a name, a reason phrase, a header or a metadata value could move the
 * cursor, retitle the window, hide text or show it in another order than it is.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;
const UNSAFE_KEEP_NEWLINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;

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

/**
 * JSON text plat re-rendered for a terminal (a pretty-printed body, items under --paginate), with the characters
 * JSON.stringify leaves raw but a terminal acts on — C1 controls such as the one-byte CSI U+009B, bidirectional
 * controls, line separators — written as \uXXXX escapes: the same JSON value, shown inert. (JSON.stringify already
 * escapes C0 controls such as ESC.) These characters can only stand inside strings, so the text stays valid JSON.
 */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
export function escapeJsonForTerminal(json: string): string {
  return json.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** True when the text holds nothing `sanitize` would change (before trimming and bounding). */
export function isPrintable(text: string): boolean {
  return !new RegExp(UNSAFE.source).test(text);
}

/**
 * Words filled into lines of at most `width` characters: the first line starts with `first`, the others with `rest`,
 * and a word longer than the room gets a line of its own. One wrap for help, help topics and tables. `text` is split
 * at whitespace; words given already split are kept as they are (an empty one keeps a doubled space).
 */
export function wrapWords(text: string | readonly string[], width: number, first = '', rest = ''): string[] {
  const words = typeof text === 'string' ? text.split(/\s+/).filter(Boolean) : text;
  if (words.length === 0) return [first.trimEnd()];
  const lines: string[] = [];
  let line = first;
  // Nothing but the lead on this line yet: the next word goes on it whatever its length.
  let empty = true;
  for (const word of words) {
    if (!empty && [...line].length + 1 + [...word].length > width) {
      lines.push(line);
      line = rest;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty &&= word === '';
  }
  lines.push(line);
  return lines;
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
 * (listStudent → listStudents). One rule for every unknown word plat meets (profiles, operations, subcommands,
 * scopes a server does not offer); didYouMean says them as a sentence, a list that quotes them says them its way.
 */
export function closestWords(word: string, candidates: readonly string[], max = 3): string[] {
  const lower = word.toLowerCase();
  const FAR = Number.MAX_SAFE_INTEGER;
  return [...new Set(candidates)]
    .map((c) => {
      const other = c.toLowerCase();
      const limit = Math.max(2, Math.floor(c.length / 3));
      // The distance is at least the difference in length: computed only where it can be close (a description of
      // 200,000 operations otherwise costs seconds of edit distances for one typo).
      const d = Math.abs(other.length - lower.length) <= limit ? editDistance(lower, other) : FAR;
      const close = d <= limit || (lower.length >= 3 && (other.includes(lower) || lower.includes(other)));
      return { c, d, close };
    })
    .filter(({ close }) => close)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, max)
    .map(({ c }) => c);
}

/** The closest-match sentence every unknown word gets: " Did you mean a or b?", or nothing. */
export function didYouMean(word: string, candidates: readonly string[], max = 3): string {
  const close = closestWords(word, candidates, max);
  return close.length > 0 ? ` Did you mean ${close.join(' or ')}?` : '';
}
