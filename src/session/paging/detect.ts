/**
 * How a list API pages, decided from its first page, and where each page's items and next page are. Pure: no I/O.
 *
 * The order (documented in `plat help requests`, src/help/topics/requests.md, and `plat call --help`; keep them in step):
 *   next page:  1. an RFC 8288 `Link` header with rel="next"
 *               2. a body member, the first present of: `next`, `next_url`, `next_page_url`, `links.next`
 *                  (or `links.next.href`), `@odata.nextLink`, `next_cursor`, `meta.next_cursor`, `meta.cursor`,
 *                  `response_metadata.next_cursor`, `cursor` — a URL (absolute or relative) is followed, any
 *                  other string or number is sent back as the query parameter `cursor`
 *               3. page numbers: `page` with `total_pages` (top level or under `meta`): `page=<page+1>` until the last
 *               4. none of these: the list has one page (paginate.ts refuses a page that says has_more)
 *   items:      the body itself when it is an array; otherwise the object's only array member, or, when there are
 *               several, the first of `items`, `data`, `results`, `value`, `records`, `entries`, `elements`
 *   `--items <path>` and `--next <path>[=<param>]` replace the detection of their half.
 */
import { UsageError } from '../../errors.js';

/** A path into a JSON document: member names and array indexes. [] is the document itself. */
export type JsonPath = Array<string | number>;

type NextRule =
  /** RFC 8288 Link header, rel="next". */
  | { kind: 'link' }
  /** A body member holding the next page's URL, or a cursor sent back as the query parameter `param`. */
  | { kind: 'member'; path: JsonPath; param: string }
  /** `page` and `total_pages` members; the next page is `param=<page + 1>`. */
  | { kind: 'page-number'; page: JsonPath; totalPages: JsonPath; param: string }
  /** One page only. */
  | { kind: 'none' };

export interface PageShape {
  items: JsonPath;
  next: NextRule;
}

/** What the user named with --items / --next, already parsed. */
export interface ShapeHints {
  items?: JsonPath;
  next?: { path: JsonPath; param: string };
}

/** The next page: a URL to fetch, or the end. */
export type NextPage = { url: URL; via: 'link' | 'cursor' | 'page' } | undefined;

const NEXT_MEMBERS: JsonPath[] = [
  ['next'],
  ['next_url'],
  ['next_page_url'],
  ['links', 'next'],
  ['@odata.nextLink'],
  ['next_cursor'],
  ['meta', 'next_cursor'],
  ['meta', 'cursor'],
  ['response_metadata', 'next_cursor'],
  ['cursor'],
];
const ITEM_MEMBERS = ['items', 'data', 'results', 'value', 'records', 'entries', 'elements'];
const CURSOR_PARAM = 'cursor';

/** Parses `a.b`, `.a.b[0]`, `["@odata.nextLink"]`, `meta['next cursor']` into a path. */
export function parseJsonPath(text: string, flag: string): JsonPath {
  const path: JsonPath = [];
  let i = text.startsWith('.') ? 1 : 0;
  if (text.trim() === '' || text === '.') return path;
  const bad = (why: string) => new UsageError(`${flag} "${text}" is not a path like items, data.rows or ["@odata.nextLink"]: ${why}.`);
  while (i < text.length) {
    const c = text[i]!;
    if (c === '[') {
      const close = text.indexOf(']', i);
      if (close < 0) throw bad('a [ is not closed');
      const inner = text.slice(i + 1, close).trim();
      if (/^\d+$/.test(inner)) path.push(Number(inner));
      else if (/^"(?:[^"\\]|\\.)*"$/.test(inner)) path.push(JSON.parse(inner) as string);
      else if (/^'[^']*'$/.test(inner)) path.push(inner.slice(1, -1));
      else throw bad(`[${inner}] is neither an index nor a quoted name`);
      i = close + 1;
      if (text[i] === '.') i++;
      continue;
    }
    let end = i;
    while (end < text.length && text[end] !== '.' && text[end] !== '[') end++;
    const name = text.slice(i, end);
    if (!name) throw bad('an empty name');
    path.push(name);
    i = text[end] === '.' ? end + 1 : end;
    if (text[end] === '.' && end + 1 === text.length) throw bad('it ends with a dot');
  }
  return path;
}

/** `--next <path>[=<param>]`: the member holding the next URL or cursor, and the query parameter a cursor goes in. */
export function parseNextHint(text: string): { path: JsonPath; param: string } {
  const match = /^(.*[^=])=([A-Za-z0-9_.~[\]-]+)$/.exec(text);
  return match ? { path: parseJsonPath(match[1]!, '--next'), param: match[2]! } : { path: parseJsonPath(text, '--next'), param: CURSOR_PARAM };
}

function formatJsonPath(path: JsonPath): string {
  if (path.length === 0) return '.';
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join('');
}

function getPath(value: unknown, path: JsonPath): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (typeof key === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[key];
    } else {
      if (Array.isArray(current) || !Object.hasOwn(current, key)) return undefined;
      current = (current as Record<string, unknown>)[key];
    }
  }
  return current;
}

/**
 * Decides the shape from the first page. Throws a PlatError-compatible UsageError when the items cannot be found,
 * naming what was seen so the user can write --items.
 */
export function detectShape(body: unknown, linkHeader: string | undefined, hints: ShapeHints = {}): PageShape {
  return { items: hints.items ?? detectItems(body), next: hints.next ? { kind: 'member', ...hints.next } : detectNext(body, linkHeader) };
}

function detectItems(body: unknown): JsonPath {
  if (Array.isArray(body)) return [];
  if (body === null || typeof body !== 'object') {
    throw new UsageError(`The first page is ${body === null ? 'null' : `a JSON ${typeof body}`}, not a list: --paginate needs an array of items (name it with --items <path>).`);
  }
  const arrays = Object.keys(body).filter((key) => Array.isArray((body as Record<string, unknown>)[key]));
  if (arrays.length === 1) return [arrays[0]!];
  const known = ITEM_MEMBERS.find((name) => arrays.includes(name));
  if (known) return [known];
  if (arrays.length === 0) {
    throw new UsageError('The first page has no array of items at its top level: name it with --items <path> (for example --items data.rows).');
  }
  throw new UsageError(`The first page has several arrays (${arrays.slice(0, 5).map((a) => formatJsonPath([a])).join(', ')}): name the items with --items <path>.`);
}

function detectNext(body: unknown, linkHeader: string | undefined): NextRule {
  if (linkHeader !== undefined && nextLink(linkHeader) !== undefined) return { kind: 'link' };
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const path of NEXT_MEMBERS) {
      const value = getPath(body, path);
      if (value === undefined) continue;
      // `links.next` may be a JSON:API link object.
      if (value !== null && typeof value === 'object' && typeof (value as { href?: unknown }).href === 'string') {
        return { kind: 'member', path: [...path, 'href'], param: CURSOR_PARAM };
      }
      if (value === null || typeof value === 'string' || typeof value === 'number' || value === false) {
        return { kind: 'member', path, param: CURSOR_PARAM };
      }
    }
    for (const base of [[], ['meta']] as JsonPath[]) {
      const page = getPath(body, [...base, 'page']);
      const total = getPath(body, [...base, 'total_pages']);
      if (Number.isSafeInteger(page) && Number.isSafeInteger(total)) {
        return { kind: 'page-number', page: [...base, 'page'], totalPages: [...base, 'total_pages'], param: 'page' };
      }
    }
  }
  return { kind: 'none' };
}

/** The items of a page of this shape; an error names the path when a later page breaks the shape. */
export function itemsOf(body: unknown, shape: PageShape): unknown[] {
  const items = getPath(body, shape.items);
  if (Array.isArray(items)) return items;
  // The last page of some APIs drops the member or sets it to null: no items.
  if (items === undefined || items === null) return [];
  throw new UsageError(`${formatJsonPath(shape.items)} is not an array on this page: name the items with --items <path>.`);
}

/** Where the page after `url` is, by the shape's rule; undefined at the end. */
export function nextPage(shape: PageShape, url: URL, body: unknown, linkHeader: string | undefined): NextPage {
  switch (shape.next.kind) {
    case 'none':
      return undefined;
    case 'link': {
      const target = linkHeader === undefined ? undefined : nextLink(linkHeader);
      return target === undefined ? undefined : { url: resolve(target, url), via: 'link' };
    }
    case 'member': {
      const value = getPath(body, shape.next.path);
      if (value === undefined || value === null || value === false || value === '') return undefined;
      if (typeof value === 'string' && looksLikeUrl(value)) return { url: resolve(value, url), via: 'link' };
      if (typeof value !== 'string' && typeof value !== 'number') {
        throw new UsageError(`${formatJsonPath(shape.next.path)} holds ${Array.isArray(value) ? 'an array' : value === true ? 'true' : 'an object'}, not a URL or cursor: name the next page with --next <path>.`);
      }
      const next = new URL(url);
      next.searchParams.set(shape.next.param, String(value));
      return { url: next, via: 'cursor' };
    }
    case 'page-number': {
      const page = getPath(body, shape.next.page);
      const total = getPath(body, shape.next.totalPages);
      if (!Number.isSafeInteger(page) || !Number.isSafeInteger(total) || (page as number) >= (total as number)) return undefined;
      const next = new URL(url);
      next.searchParams.set(shape.next.param, String((page as number) + 1));
      return { url: next, via: 'page' };
    }
  }
}

function looksLikeUrl(value: string): boolean {
  return /^https?:\/\//i.test(value) || value.startsWith('/') || value.startsWith('?');
}

function resolve(target: string, base: URL): URL {
  try {
    return new URL(target, base);
  } catch {
    throw new UsageError(`The next page's address "${target.slice(0, 200)}" is not a URL: name the next page with --next <path>.`);
  }
}

/**
 * The target of the first rel="next" link in an RFC 8288 Link header (several headers arrive joined by ", ").
 * Commas and semicolons inside <…> and quoted strings are part of them, not separators.
 */
export function nextLink(header: string): string | undefined {
  let i = 0;
  while (i < header.length) {
    const open = header.indexOf('<', i);
    if (open < 0) return undefined;
    const close = header.indexOf('>', open);
    if (close < 0) return undefined;
    // Parameters run to the next comma outside quotes.
    let j = close + 1;
    let quoted = false;
    for (; j < header.length; j++) {
      const c = header[j]!;
      if (c === '"' && header[j - 1] !== '\\') quoted = !quoted;
      if (c === ',' && !quoted) break;
    }
    // Sliced once, not built a character at a time.
    const params = header.slice(close + 1, j);
    // Most links of a page (first, prev, last) are not the next one: no need to take their parameters apart.
    if (!/next/i.test(params)) {
      i = j + 1;
      continue;
    }
    for (const param of params.split(';')) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'rel') continue;
      const value = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (value.toLowerCase().split(/\s+/).includes('next')) return header.slice(open + 1, close).trim();
    }
    i = j + 1;
  }
  return undefined;
}
