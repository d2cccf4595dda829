// The pure half of --paginate: Link headers, paths, and which rule a first page picks.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../../src/errors.js';
import { detectShape, itemsOf, nextLink, nextPage, parseJsonPath, parseNextHint } from '../../../../src/session/paging/detect.js';

const url = new URL('https://school.example/api/courses?per_page=10');

describe('nextLink (RFC 8288)', () => {
  it('finds rel="next" among several links', () => {
    expect(nextLink('<https://a.example/p1>; rel="first", <https://a.example/p3>; rel="next", <https://a.example/p9>; rel="last"')).toBe('https://a.example/p3');
  });
  it('reads unquoted and multi-valued rel, any case', () => {
    expect(nextLink('</p2>; rel=next')).toBe('/p2');
    expect(nextLink('</p2>; title="x"; REL="prefetch Next"')).toBe('/p2');
  });
  it('keeps commas and semicolons inside the target and inside quoted parameters', () => {
    expect(nextLink('</p?ids=1,2;3>; title="a, b; rel=next"; rel="prev", </p?ids=4,5>; rel="next"')).toBe('/p?ids=4,5');
  });
  it('is undefined without a next link', () => {
    expect(nextLink('</p1>; rel="prev"')).toBeUndefined();
    expect(nextLink('')).toBeUndefined();
    expect(nextLink('garbage; rel=next')).toBeUndefined();
  });
});

describe('parseJsonPath', () => {
  it.each([
    ['items', ['items']],
    ['.data.rows', ['data', 'rows']],
    ['list[0].items', ['list', 0, 'items']],
    ['["@odata.nextLink"]', ['@odata.nextLink']],
    ["meta['next cursor']", ['meta', 'next cursor']],
    ['.', []],
  ])('%s', (text, path) => {
    expect(parseJsonPath(text, '--items')).toEqual(path);
  });
  it.each(['a..b', 'a.', 'a[', 'a[b]'])('refuses %s as a usage error', (text) => {
    expect(() => parseJsonPath(text, '--items')).toThrow(UsageError);
  });
  it('--next path=param names the cursor parameter', () => {
    expect(parseNextHint('paging.after=after')).toEqual({ path: ['paging', 'after'], param: 'after' });
    expect(parseNextHint('meta.token')).toEqual({ path: ['meta', 'token'], param: 'cursor' });
  });
});

describe('detectShape', () => {
  it('a Link header wins over body members', () => {
    const shape = detectShape([{ id: 1 }], '</p2>; rel="next"');
    expect(shape).toEqual({ items: [], next: { kind: 'link' } });
    expect(nextPage(shape, url, [], '</api/courses?page=2>; rel="next"')?.url.href).toBe('https://school.example/api/courses?page=2');
    expect(nextPage(shape, url, [], undefined)).toBeUndefined();
  });

  it.each([
    [{ data: [], next: 'https://school.example/p2' }, ['next']],
    [{ data: [], next_url: '/p2' }, ['next_url']],
    [{ data: [], next_page_url: '/p2' }, ['next_page_url']],
    [{ data: [], links: { next: '/p2' } }, ['links', 'next']],
    [{ data: [], links: { next: { href: '/p2' } } }, ['links', 'next', 'href']],
    [{ value: [], '@odata.nextLink': '/p2' }, ['@odata.nextLink']],
    [{ data: [], next_cursor: 'abc' }, ['next_cursor']],
    [{ data: [], meta: { next_cursor: 'abc' } }, ['meta', 'next_cursor']],
    [{ data: [], meta: { cursor: 'abc' } }, ['meta', 'cursor']],
    [{ data: [], response_metadata: { next_cursor: 'abc' } }, ['response_metadata', 'next_cursor']],
    [{ data: [], cursor: 'abc' }, ['cursor']],
  ])('member %j', (body, path) => {
    expect(detectShape(body, undefined).next).toEqual({ kind: 'member', path, param: 'cursor' });
  });

  it('a URL is followed (relative to the page), anything else is a cursor in ?cursor=', () => {
    const shape = detectShape({ data: [], next: null }, undefined);
    expect(nextPage(shape, url, { data: [], next: '?page=2' }, undefined)).toEqual({ url: new URL('https://school.example/api/courses?page=2'), via: 'link' });
    expect(nextPage(shape, url, { data: [], next: 'opaque==' }, undefined)?.url.href).toBe('https://school.example/api/courses?per_page=10&cursor=opaque%3D%3D');
    expect(nextPage(shape, url, { data: [], next: 7 }, undefined)?.url.searchParams.get('cursor')).toBe('7');
    for (const end of [null, false, '', undefined]) expect(nextPage(shape, url, { data: [], next: end }, undefined)).toBeUndefined();
  });

  it('page with total_pages, at the top level or under meta', () => {
    for (const body of [{ items: [], page: 2, total_pages: 3 }, { items: [], meta: { page: 2, total_pages: 3 } }]) {
      const shape = detectShape(body, undefined);
      expect(shape.next.kind).toBe('page-number');
      expect(nextPage(shape, url, body, undefined)?.url.searchParams.get('page')).toBe('3');
    }
    const last = { items: [], page: 3, total_pages: 3 };
    expect(nextPage(detectShape(last, undefined), url, last, undefined)).toBeUndefined();
  });

  it('no rule: one page', () => {
    expect(detectShape({ courses: [] }, undefined).next).toEqual({ kind: 'none' });
    expect(detectShape([], undefined).next).toEqual({ kind: 'none' });
  });

  it('items: the only array, else a known name, else a usage error naming the arrays', () => {
    expect(detectShape({ total: 3, courses: [] }, undefined).items).toEqual(['courses']);
    expect(detectShape({ columns: [], results: [] }, undefined).items).toEqual(['results']);
    expect(() => detectShape({ a: [], b: [] }, undefined)).toThrow(/several arrays \(\.a, \.b\)/);
    expect(() => detectShape({ a: 1 }, undefined)).toThrow(/no array of items/);
    expect(() => detectShape('text', undefined)).toThrow(/a JSON string, not a list/);
  });

  it('hints replace detection', () => {
    const shape = detectShape({ r: { rows: [1, 2] }, p: { after: 'x' } }, '</p2>; rel="next"', { items: ['r', 'rows'], next: { path: ['p', 'after'], param: 'after' } });
    expect(itemsOf({ r: { rows: [1, 2] } }, shape)).toEqual([1, 2]);
    expect(nextPage(shape, url, { p: { after: 'x' } }, undefined)?.url.searchParams.get('after')).toBe('x');
  });

  it('a later page without the items member has none; one where it is not an array is an error', () => {
    const shape = detectShape({ data: [1] }, undefined);
    expect(itemsOf({}, shape)).toEqual([]);
    expect(itemsOf({ data: null }, shape)).toEqual([]);
    expect(() => itemsOf({ data: 'x' }, shape)).toThrow(/\.data is not an array/);
  });

  it('an index in a path reads an array, and finds nothing in an object', () => {
    const shape = detectShape({ pages: [{ rows: [1, 2] }] }, undefined, { items: parseJsonPath('pages[0].rows', '--items') });
    expect(itemsOf({ pages: [{ rows: [1, 2] }] }, shape)).toEqual([1, 2]);
    expect(itemsOf({ pages: { 0: { rows: [3] } } }, shape)).toEqual([]);
  });

  it('a first page that is null or a number names what it is', () => {
    expect(() => detectShape(null, undefined)).toThrow(/^The first page is null, not a list: --paginate needs an array of items/);
    expect(() => detectShape(42, undefined)).toThrow(/^The first page is a JSON number, not a list/);
  });

  it('a next member that holds an array or an object is neither URL nor cursor: a usage error naming it', () => {
    const shape = detectShape({ data: [], next: null }, undefined);
    expect(() => nextPage(shape, url, { data: [], next: ['/p2'] }, undefined)).toThrow(/^\.next holds an array, not a URL or cursor: name the next page with --next <path>\.$/);
    expect(() => nextPage(shape, url, { data: [], next: { href: '/p2' } }, undefined)).toThrow(/^\.next holds an object, not a URL or cursor/);
    expect(() => nextPage(shape, url, { data: [], next: true }, undefined)).toThrow(/^\.next holds true, not a URL or cursor/);
  });
});
