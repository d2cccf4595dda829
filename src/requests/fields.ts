/**
 * Request fields as `gh api` builds them, for every way plat takes them (-f/-F of call, api and op, and so batch's
 * and the library's query objects): `key[]=v` appends to a list, `key[sub]=v` (and deeper, `a[b][c]`, `a[][x]`)
 * builds objects, `key[]` alone is an empty list, and a key given twice without `[]` is refused rather than one value
 * silently winning. The same tree becomes either a JSON body or query parameters; this module knows nothing of
 * flags' values (typed values and @files are the caller's), so it stays a leaf any layer may use.
 */
import { UsageError } from '../errors.js';
import { sanitize } from '../terminal/text.js';
import { MAX_NESTING, tooDeep } from './depth.js';

export type FieldTree = { [key: string]: unknown };

/** One -f/-F argument, split: the key as written, its path (`''` for each `[]`), and its value. */
interface FieldKey {
  key: string;
  path: string[];
}

/** `name` then any number of `[sub]` or `[]`; the name itself has no brackets (as gh reads it). */
const KEY_SHAPE = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

/**
 * Splits `key=value` (or `key[]` alone, gh's empty list) and reads the key's path. `value` is undefined only for
 * that empty list.
 */
export function splitField(raw: string, flag: string): FieldKey & { value: string | undefined } {
  const i = raw.indexOf('=');
  if (i < 0 && raw.endsWith('[]')) return { ...fieldKey(raw, flag), value: undefined };
  if (i <= 0) throw new UsageError(`${flag} expects key=value (got "${raw}").`);
  return { ...fieldKey(raw.slice(0, i), flag), value: raw.slice(i + 1) };
}

function fieldKey(key: string, flag: string): FieldKey {
  const match = KEY_SHAPE.exec(key);
  if (!match) {
    throw new UsageError(`${flag} ${key}: a field's key is a name with optional [sub] or [] parts, such as teacher[name] or ids[].`);
  }
  const path = [match[1] ?? '', ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '')];
  // The builders below and the query rule walk the tree: a key as deep as a whole argument list could be is not
  // taken (named by its start: 40,000 levels would fill the terminal).
  if (path.length > MAX_NESTING) {
    throw new UsageError(`${tooDeep(`${flag} ${sanitize(key, 40)}`)} Send a deeper document as the body with --input.`);
  }
  if (path.some((part, n) => part === '' && path[n + 1] === '')) {
    throw new UsageError(`${flag} ${key}: a list of lists cannot be written as fields; send the body with --input.`);
  }
  return { key, path };
}

/**
 * A key given more than once for a query (`-f q=a -f q=b` on GET): each value goes under the same name, in order
 * (`q=a&q=b`), as curl -G -d sends them and as most APIs take a list. Never in a JSON body, where gh refuses it.
 */
class Repeated {
  constructor(readonly values: unknown[]) {}
}

/**
 * Adds one field to the tree, as gh does: `[]` then `[x]` fills the list's last object while it has no `x` yet,
 * else starts a new one. `value` undefined is `key[]` alone: an empty list (a list already there is kept).
 * `repeat`: the tree becomes a query, where a key given twice repeats (Repeated); in a body it is refused.
 */
export function addField(tree: FieldTree, field: FieldKey, value: unknown, options: { repeat?: boolean } = {}): void {
  let dest = tree;
  let isList = false;
  let name: string | undefined;
  for (const part of field.path) {
    if (part === '') {
      isList = true;
      continue;
    }
    if (name !== undefined) {
      dest = isList ? lastObjectOf(dest, name, part, field.key) : objectAt(dest, name, field.key);
      isList = false;
    }
    name = part;
  }
  const last = name as string;
  const existing = Object.hasOwn(dest, last) ? dest[last] : undefined;
  if (isList) {
    if (existing !== undefined && !Array.isArray(existing)) throw conflict(field.key, last, 'a list');
    const list = (existing as unknown[] | undefined) ?? [];
    if (value !== undefined) list.push(value);
    dest[last] = list;
    return;
  }
  if (Object.hasOwn(dest, last)) {
    if (options.repeat && value !== undefined && (existing instanceof Repeated || !isContainer(existing))) {
      if (existing instanceof Repeated) existing.values.push(value);
      else dest[last] = new Repeated([existing, value]);
      return;
    }
    throw new UsageError(`Field ${field.key} is given twice. For a list, give each value as ${field.key}[]=value.`);
  }
  dest[last] = value;
}

export function emptyTree(): FieldTree {
  // No prototype: a field named "__proto__" or "constructor" is just a field.
  return Object.create(null) as FieldTree;
}

function objectAt(dest: FieldTree, name: string, key: string): FieldTree {
  const existing = Object.hasOwn(dest, name) ? dest[name] : undefined;
  if (existing === undefined) return (dest[name] = emptyTree()) as FieldTree;
  if (!isObject(existing)) throw conflict(key, name, 'an object');
  return existing;
}

function lastObjectOf(dest: FieldTree, name: string, next: string, key: string): FieldTree {
  const existing = Object.hasOwn(dest, name) ? dest[name] : undefined;
  if (existing !== undefined && !Array.isArray(existing)) throw conflict(key, name, 'a list');
  const list = (existing as unknown[] | undefined) ?? (dest[name] = []);
  const last = list.at(-1);
  if (isObject(last) && (!Object.hasOwn(last, next) || Array.isArray(last[next]))) return last;
  const fresh = emptyTree();
  list.push(fresh);
  return fresh;
}

function conflict(key: string, name: string, wanted: string): UsageError {
  return new UsageError(`Field ${key} needs ${name} to be ${wanted}, but another field already made it something else.`);
}

function isObject(value: unknown): value is FieldTree {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Repeated);
}

/** A list or an object another field built: a value given for the same name conflicts with it. */
function isContainer(value: unknown): boolean {
  return Array.isArray(value) || isObject(value);
}

function isPlainObject(value: unknown): value is FieldTree {
  if (!isObject(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === null || proto === Object.prototype;
}

/**
 * A tree as query parameters, names in brackets as they were written: `teacher[name]=Ada`, and for lists either
 * `ids[]=1&ids[]=2` (fields, whose lists were written with `[]`: gh's form) or `ids=1&ids=2` (a program's query
 * object, whose lists repeat the name it wrote). Scalars as text (null as "null", as plat always sent it); a list
 * inside a repeated-name list has no query form and is refused by name.
 */
export function appendQuery(params: URLSearchParams, tree: FieldTree, lists: 'brackets' | 'repeat', what: (name: string) => string): void {
  const add = (name: string, value: unknown, inList: boolean): void => {
    if (value instanceof Repeated) {
      for (const item of value.values) add(name, item, inList);
    } else if (Array.isArray(value)) {
      if (inList && lists === 'repeat') throw new UsageError(`${what(name)}: a list inside a list has no query form.`);
      for (const item of value) add(lists === 'brackets' ? `${name}[]` : name, item, true);
    } else if (isPlainObject(value)) {
      if (inList && lists === 'repeat') throw new UsageError(`${what(name)}: an object inside a list has no query form.`);
      for (const [key, inner] of Object.entries(value)) add(`${name}[${key}]`, inner, false);
    } else if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
      params.append(name, String(value));
    } else if (value !== undefined) {
      // A Date, a Map, a function: their text would be a guess ("[object Object]" at worst), so they are named.
      throw new UsageError(`${what(name)} must be a string, number, boolean or null (or a list or plain object of them).`);
    }
  };
  for (const [name, value] of Object.entries(tree)) add(name, value, false);
}
