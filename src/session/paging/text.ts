/**
 * A page of a list, read from its bytes without turning its large arrays into objects all at once. A server can
 * send one 32 MiB page of millions of tiny items: parsed whole, that is millions of objects (1.6 GiB under
 * --ndjson). Here one linear pass over the bytes finds the page's structure (and refuses one nested deeper than
 * MAX_JSON_DEPTH); a large array at the top (the page itself, or one of its members) is left as a range of the
 * bytes, and its items are parsed one at a time as they are printed. The rest of the page (next links, cursors,
 * counts) is parsed as usual. Memory is the page's bytes, whatever the number of items in them.
 *
 * JSON's structural characters are ASCII, and no byte of a multi-byte UTF-8 character is ASCII, so the bytes can
 * be scanned without decoding them.
 */
/**
 * Deeper than any real list: an item 100,000 deep parses, but printing it (JSON.stringify) recurses once per level
 * and ends in "Maximum call stack size exceeded". Far below where that happens.
 */
export const MAX_JSON_DEPTH = 1000;

/** An array this many bytes long or longer is read lazily. */
const LAZY_MIN_BYTES = 256 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The items of a large array, parsed one at a time from the page's bytes as they are iterated; array-like where
 * paging needs it. Nothing is kept per item (not even its offsets: millions of items would make that a list of
 * millions): iterating scans the array's bytes again.
 */
export class LazyItems implements Iterable<unknown> {
  constructor(
    private readonly bytes: Buffer,
    /** The array's `[` and one past its `]`. */
    private readonly start: number,
    private readonly end: number,
    readonly length: number,
    /** The error for an item that is not JSON (it is parsed only when reached). */
    private readonly bad: () => Error,
  ) {}

  slice(start: number, end = this.length): LazyItems {
    if (start !== 0) throw new RangeError('LazyItems slices from the start only');
    return new LazyItems(this.bytes, this.start, this.end, Math.max(0, Math.min(this.length, end)), this.bad);
  }

  *[Symbol.iterator](): Iterator<unknown> {
    for (const text of this.texts()) {
      let item: unknown;
      try {
        item = JSON.parse(text);
      } catch {
        throw this.bad();
      }
      yield item;
    }
  }

  private *texts(): Generator<string> {
    const { bytes } = this;
    let count = 0;
    let depth = 0;
    let from = -1;
    const take = (to: number) => {
      let end = to;
      while (end > from && isSpace(bytes[end - 1]!)) end--;
      return bytes.toString('utf8', from, end);
    };
    for (let i = this.start + 1; i < this.end - 1 && count < this.length; i++) {
      const c = bytes[i]!;
      if (isSpace(c)) continue;
      if (from < 0 && depth === 0 && c !== COMMA) from = i;
      if (c === QUOTE) {
        for (i++; i < this.end && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
      else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
      else if (c === COMMA && depth === 0) {
        count++;
        yield take(i);
        from = -1;
      }
    }
    if (from >= 0 && count < this.length) yield take(this.end - 1);
  }
}

/** What a page's items can be: an array, or a large one left in the page's bytes. */
export type Items = unknown[] | LazyItems;

export class TooDeepError extends Error {}

export interface ReadPage {
  body: unknown;
  /** The large arrays of `body`, by the placeholder (an empty array) that stands for each in it. */
  lazy: Map<unknown, LazyItems>;
}

interface Span {
  start: number;
  end: number;
  /** For a member of the top-level object: its key's JSON text. */
  key?: [number, number];
  count: number;
}

/**
 * Parses a page. `lazily` false: parsed whole (--slurp prints whole pages; an --items path below the top level
 * needs the whole tree). Throws TooDeepError when the page nests deeper than MAX_JSON_DEPTH, and SyntaxError when it
 * is not JSON.
 */
export function readPage(bytes: Buffer, lazily: boolean, bad: () => Error): ReadPage {
  const spans = scan(bytes);
  const large = lazily ? spans.filter((s) => s.end - s.start >= LAZY_MIN_BYTES) : [];
  if (large.length === 0) return { body: JSON.parse(bytes.toString('utf8')), lazy: new Map() };
  const lazy = new Map<unknown, LazyItems>();
  const items = (span: Span) => new LazyItems(bytes, span.start, span.end, span.count, bad);
  const root = large.find((s) => s.key === undefined);
  if (root) {
    // The page is the array: check what surrounds it is only whitespace, as JSON.parse would.
    JSON.parse(`${bytes.toString('utf8', 0, root.start)}[]${bytes.toString('utf8', root.end)}`);
    const placeholder: unknown[] = [];
    lazy.set(placeholder, items(root));
    return { body: placeholder, lazy };
  }
  // The page with each large member replaced by [], then the placeholders found again by their keys.
  const pieces: string[] = [];
  let at = 0;
  for (const span of large) {
    pieces.push(bytes.toString('utf8', at, span.start), '[]');
    at = span.end;
  }
  pieces.push(bytes.toString('utf8', at));
  const body = JSON.parse(pieces.join('')) as Record<string, unknown>;
  for (const span of large) {
    const key = JSON.parse(bytes.toString('utf8', span.key![0], span.key![1])) as string;
    const placeholder = body[key];
    if (Array.isArray(placeholder) && placeholder.length === 0 && !lazy.has(placeholder)) lazy.set(placeholder, items(span));
  }
  return { body, lazy };
}

/**
 * One pass: the arrays at the top (the page, or its members' values) with each element's bounds. Only the
 * structure is checked here (depth, strings); JSON.parse judges the rest.
 */
function scan(bytes: Buffer): Span[] {
  const spans: Span[] = [];
  let depth = 0;
  let rootIsObject = false;
  let open: Span | undefined; // the top array being read
  let inElement = false;
  let keyStart = -1;
  let key: [number, number] | undefined;
  const endElement = () => {
    if (open && inElement) open.count++;
    inElement = false;
  };
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      const start = i;
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (open && depth === openDepth(rootIsObject)) inElement = true;
      if (rootIsObject && depth === 1 && keyStart === -1) keyStart = start;
      if (rootIsObject && depth === 1 && keyStart === start) key = [start, i + 1];
      continue;
    }
    if (isSpace(c)) continue;
    if (open && depth === openDepth(rootIsObject) && c !== COMMA && c !== CLOSE_ARRAY) inElement = true;
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth === 0) rootIsObject = c === OPEN_OBJECT;
      if (c === OPEN_ARRAY && ((depth === 0 && !rootIsObject) || (depth === 1 && rootIsObject && key))) {
        open = { start: i, end: -1, key: depth === 1 ? key : undefined, count: 0 };
      }
      if (++depth > MAX_JSON_DEPTH) throw new TooDeepError();
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (open && depth === openDepth(rootIsObject) && c === CLOSE_ARRAY) {
        endElement();
        open.end = i + 1;
        spans.push(open);
        open = undefined;
      }
      depth--;
    } else if (c === COMMA) {
      if (open && depth === openDepth(rootIsObject)) endElement();
      if (rootIsObject && depth === 1) {
        keyStart = -1;
        key = undefined;
      }
    } else if (c === COLON && rootIsObject && depth === 1) {
      keyStart = -2; // the value comes next: no key until the next comma
    }
  }
  return spans;
}

/** The depth inside a top array: 1 in a page that is an array, 2 in a member of a page that is an object. */
const openDepth = (rootIsObject: boolean) => (rootIsObject ? 2 : 1);
