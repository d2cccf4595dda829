/**
 * Fields as gh api builds them (its manual: "To pass nested parameters in the request payload, use key[subkey]=value
 * syntax when declaring fields. To pass nested values as arrays, declare multiple fields with the syntax key[]=value1,
 * key[]=value2. To pass an empty array, use key[] without a value."), and their query form.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode, UsageError } from '../../../src/errors.js';
import { addField, appendQuery, emptyTree, splitField, type FieldTree } from '../../../src/requests/fields.js';

function build(...raw: string[]): FieldTree {
  const tree = emptyTree();
  for (const r of raw) {
    const field = splitField(r, '-f');
    addField(tree, field, field.value);
  }
  // Through JSON, as it is sent: the tree has no prototype, which toEqual would otherwise notice.
  return JSON.parse(JSON.stringify(tree)) as FieldTree;
}

function refusal(...raw: string[]): string {
  try {
    build(...raw);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(ExitCode.usage);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

function query(tree: FieldTree, lists: 'brackets' | 'repeat'): string {
  const params = new URLSearchParams();
  appendQuery(params, tree, lists, (name) => `query ${name}`);
  return decodeURIComponent(params.toString());
}

describe('fields', () => {
  it('key[]=v appends to a list, in the order given', () => {
    expect(build('ids[]=1', 'ids[]=2', 'ids[]=3')).toEqual({ ids: ['1', '2', '3'] });
  });

  it('key[] alone is an empty list', () => {
    expect(build('labels[]')).toEqual({ labels: [] });
    expect(build('labels[]=a', 'labels[]')).toEqual({ labels: ['a'] });
  });

  it('key[sub]=v builds objects, to any depth', () => {
    expect(build('teacher[name]=Ada', 'teacher[age]=36')).toEqual({ teacher: { name: 'Ada', age: '36' } });
    expect(build('a[b][c]=1', 'a[b][d]=2', 'a[e]=3')).toEqual({ a: { b: { c: '1', d: '2' }, e: '3' } });
    expect(build('course[tags][]=x', 'course[tags][]=y')).toEqual({ course: { tags: ['x', 'y'] } });
  });

  it('a[][x] fills the last object of a list until a key repeats, then starts the next (as gh)', () => {
    expect(build('p[][name]=Ada', 'p[][age]=36', 'p[][name]=Bo', 'p[][age]=9')).toEqual({
      p: [
        { name: 'Ada', age: '36' },
        { name: 'Bo', age: '9' },
      ],
    });
    expect(build('p[][tags][]=a', 'p[][tags][]=b')).toEqual({ p: [{ tags: ['a', 'b'] }] });
  });

  it('a key given twice without [] is refused, naming it', () => {
    expect(refusal('tag=a', 'tag=b')).toBe('Field tag is given twice. For a list, give each value as tag[]=value.');
    expect(refusal('teacher[name]=Ada', 'teacher[name]=Bo')).toContain('Field teacher[name] is given twice');
  });

  it('a key that is both a value and an object or list is refused, naming both', () => {
    expect(refusal('a=1', 'a[b]=2')).toBe('Field a[b] needs a to be an object, but another field already made it something else.');
    expect(refusal('a=1', 'a[]=2')).toContain('needs a to be a list');
    expect(refusal('a[]=1', 'a=2')).toContain('Field a is given twice');
  });

  it('the value keeps every = after the first, and may hold brackets', () => {
    expect(build('q=a=b', 'f=x[1]')).toEqual({ q: 'a=b', f: 'x[1]' });
  });

  it('refuses keys gh could not read: no name, stray brackets, no =, lists of lists', () => {
    expect(refusal('=v')).toBe('-f expects key=value (got "=v").');
    expect(refusal('name')).toBe('-f expects key=value (got "name").');
    expect(refusal('[a]=1')).toContain('a field\'s key is a name with optional [sub] or [] parts');
    expect(refusal('a[b=1')).toContain('-f a[b:');
    expect(refusal('a]b=1')).toContain('-f a]b:');
    expect(refusal('a[][]=1')).toContain('a list of lists cannot be written as fields');
  });

  it('a field named __proto__ is a field, not the tree\'s prototype', () => {
    const tree = emptyTree();
    addField(tree, splitField('__proto__[x]=1', '-f'), '1');
    expect(Object.getPrototypeOf(tree)).toBeNull();
    expect(JSON.stringify(tree)).toBe('{"__proto__":{"x":"1"}}');
  });
});

describe('the query form', () => {
  it('lists written with [] go as gh sends them: ids[]=1&ids[]=2', () => {
    expect(query(build('ids[]=1', 'ids[]=2'), 'brackets')).toBe('ids[]=1&ids[]=2');
  });

  it('objects keep the brackets they were written with', () => {
    expect(query(build('teacher[name]=Ada', 'teacher[age]=36', 'p[][x]=1'), 'brackets')).toBe('teacher[name]=Ada&teacher[age]=36&p[][x]=1');
  });

  it('a program\'s lists repeat the name it wrote; its objects are name[member]; null is "null"', () => {
    expect(query({ ids: [1, 2], 'tag[]': ['a'], filter: { year: 2, open: true, none: null } }, 'repeat')).toBe(
      'ids=1&ids=2&tag[]=a&filter[year]=2&filter[open]=true&filter[none]=null',
    );
  });

  it('a program\'s value with no query form is refused by name, never sent as [object Object]', () => {
    expect(() => query({ a: [{ b: 1 }] }, 'repeat')).toThrow('query a: an object inside a list has no query form.');
    expect(() => query({ a: [[1]] }, 'repeat')).toThrow('query a: a list inside a list has no query form.');
    expect(() => query({ when: new Date(0) }, 'repeat')).toThrow('query when must be a string, number, boolean or null');
    expect(() => query({ f: { g: () => 1 } }, 'repeat')).toThrow('query f[g] must be a string');
  });
});
