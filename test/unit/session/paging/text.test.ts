// src/session/paging/text.ts: a page's large arrays read item by item from its bytes, and pages nested too deep.
import { describe, expect, it } from 'vitest';
import { LazyItems, MAX_JSON_DEPTH, readPage, TooDeepError } from '../../../../src/session/paging/text.js';

const bad = () => new Error('not JSON');
/** Items awkward for a scanner: brackets, commas, quotes and escapes inside strings, nesting, multi-byte text. */
const awkward = [{ s: '],[{"x":1}' }, 'a\\"b,]', [1, [2, [3]], {}], null, 0, -1.5e3, true, { é: '日本', n: { m: [] } }, ''];
/** Enough of them to pass the lazy threshold (256 KiB). */
const many = Array.from({ length: 40_000 }, (_, i) => awkward[i % awkward.length]);

function page(value: unknown, spaced = false): Buffer {
  return Buffer.from(spaced ? JSON.stringify(value, null, 2) : JSON.stringify(value));
}

describe('readPage', () => {
  it.each([false, true])('a large top-level array (spaced: %s): the same items as JSON.parse, one at a time', (spaced) => {
    const { body, lazy } = readPage(page(many, spaced), true, bad);
    const items = lazy.get(body);
    expect(items).toBeInstanceOf(LazyItems);
    expect(items!.length).toBe(many.length);
    expect([...items!]).toEqual(many);
  });

  it('a large member of a page object: the rest of the page parsed as usual, the member read lazily', () => {
    const value = { meta: { next_cursor: 'abc', has_more: true }, items: many, tail: [1, 2] };
    const { body, lazy } = readPage(page(value, true), true, bad);
    const b = body as typeof value;
    expect(b.meta).toEqual(value.meta);
    expect(b.tail).toEqual([1, 2]);
    expect(lazy.has(b.tail)).toBe(false);
    expect([...lazy.get(b.items)!]).toEqual(many);
  });

  it('slice(0, n) takes the first n items', () => {
    const { body, lazy } = readPage(page(many), true, bad);
    expect([...lazy.get(body)!.slice(0, 3)]).toEqual(many.slice(0, 3));
  });

  it('small pages, and every page when not lazily, are parsed whole', () => {
    expect(readPage(page([1, 2]), true, bad).lazy.size).toBe(0);
    const whole = readPage(page({ items: many }), false, bad);
    expect(whole.lazy.size).toBe(0);
    expect((whole.body as { items: unknown[] }).items).toEqual(many);
  });

  it('an item that is not JSON fails when reached, with the caller’s error', () => {
    const text = page(many).toString().replace('"a\\\\\\"b,]"', 'nope');
    const { body, lazy } = readPage(Buffer.from(text), true, bad);
    expect(() => [...lazy.get(body)!]).toThrow('not JSON');
  });

  it('refuses a page nested deeper than MAX_JSON_DEPTH, lazily or not, before parsing it', () => {
    const deep = Buffer.from(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`);
    expect(() => readPage(deep, true, bad)).toThrow(TooDeepError);
    expect(() => readPage(deep, false, bad)).toThrow(TooDeepError);
    const inString = Buffer.from(JSON.stringify({ s: '['.repeat(5000) }));
    expect(readPage(inString, true, bad).body).toEqual({ s: '['.repeat(5000) });
  });
});
