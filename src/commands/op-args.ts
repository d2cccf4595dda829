/**
 * The words after `plat op`, parsed here rather than by commander: which of them are plat's own options (-H, -f,
 * -F, --input, -i, … — the same as plat call's) and which are the operation's parameters (`--<name> value`) depends on
 * the operation, which is known only once the document is read. A long name the operation has as a parameter is
 * the parameter (its short form still reaches plat's option: `-i` for `--include`); `-p name=value` reaches a
 * parameter whose name plat's global options take (--profile, --json, …). Pure: no schema checks yet.
 */
import { UsageError } from '../errors.js';
import type { ParamSpec } from '../catalogue/operation-shape.js';
import { typeOf } from '../catalogue/param-check.js';
import { editDistance } from '../text.js';

/** One of plat's own options as plat op sees it (built from commander's Option in cli.ts). */
export interface OwnOption {
  long?: string;
  short?: string;
  /** The key in the flags object (commander's attribute name). */
  key: string;
  takesValue: boolean;
  negate: boolean;
  /** commander's argument parser (collect for repeatable options), applied as commander would. */
  parse?: (value: string, previous: unknown) => unknown;
  defaultValue?: unknown;
  choices?: readonly string[];
}

export interface GivenParam {
  param: ParamSpec;
  /** How the person named it, for messages: `--limit` or `-p limit`. */
  flag: string;
  values: string[];
}

type Flags = Record<string, unknown>;

/** Leading options (before the operationId or filter), the first word, and what follows it unparsed. */
export function splitLeading(tokens: string[], options: OwnOption[]): { flags: Flags; first: string | undefined; rest: string[]; help: boolean } {
  const flags: Flags = {};
  let help = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--help' || token === '-h') {
      help = true;
      continue;
    }
    if (!token.startsWith('-') || token === '-') return { flags: withDefaults(flags, options), first: token, rest: tokens.slice(i + 1), help };
    const option = findOption(options, token);
    if (!option) throw unknownOption(token, options, ' Name the operation first: plat op <operationId> --<parameter> value.');
    i = take(option, token, tokens, i, flags);
  }
  return { flags: withDefaults(flags, options), first: undefined, rest: [], help };
}

/** `plat op <filter…> [--refresh]` once the first word is no operationId: every word filters; plat's options may stand anywhere. */
export function listingArgs(tokens: string[], options: OwnOption[]): { filter: string | undefined; flags: Flags; help: boolean } {
  const flags: Flags = {};
  const words: string[] = [];
  let help = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--help' || token === '-h') help = true;
    else if (!token.startsWith('-') || token === '-') words.push(token);
    else {
      const option = findOption(options, token);
      if (!option) throw unknownOption(token, options, '');
      i = take(option, token, tokens, i, flags);
    }
  }
  return { filter: words.length > 0 ? words.join(' ') : undefined, flags: withDefaults(flags, options), help };
}

/** As commander words it, with the closest option suggested. */
function unknownOption(token: string, options: OwnOption[], more: string): UsageError {
  const name = token.split('=')[0]!;
  const longs = options.map((o) => o.long).filter((l): l is string => Boolean(l));
  const close = longs.filter((l) => editDistance(l, name) <= 2).sort((a, b) => editDistance(a, name) - editDistance(b, name))[0];
  return new UsageError(`unknown option '${name}'${close ? `\n(Did you mean ${close}?)` : ''}${more ? `\n${more.trim()}` : ''}`);
}

/** The operation's parameters and plat's own options among the words after the operationId. */
export function parseOpArgs(operationId: string, params: ParamSpec[], tokens: string[], options: OwnOption[], flags: Flags = {}): { given: GivenParam[]; flags: Flags; help: boolean } {
  const given = new Map<ParamSpec, GivenParam>();
  let help = false;
  const add = (param: ParamSpec, flag: string, value: string) => {
    const entry = given.get(param) ?? { param, flag, values: [] };
    entry.values.push(value);
    given.set(param, entry);
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--help' || token === '-h') {
      help = true;
      continue;
    }
    if (!token.startsWith('-') || token === '-' || token === '--') {
      throw new UsageError(`"${token}" is not a parameter: give each as --<name> value (plat op ${operationId} --help lists them).`);
    }
    const eq = token.indexOf('=');
    const name = token.startsWith('--') ? token.slice(2, eq > 2 ? eq : undefined) : undefined;
    const param = name !== undefined ? paramNamed(params, name) : undefined;
    if (param && name !== undefined) {
      if (eq > 2) {
        add(param, `--${name}`, token.slice(eq + 1));
        continue;
      }
      const next = tokens[i + 1];
      if (next === undefined || next.startsWith('--')) {
        // A boolean parameter may stand alone, as a flag does.
        if (typeOf(param.schema) !== 'boolean') throw new UsageError(`${token} needs a value.`);
        add(param, token, 'true');
        continue;
      }
      add(param, token, next);
      i++;
      continue;
    }
    const option = findOption(options, token);
    if (option) {
      i = take(option, token, tokens, i, flags);
      continue;
    }
    if (name === undefined) throw new UsageError(`Unknown option ${token}. plat op ${operationId} --help lists the operation's parameters and plat's options.`);
    throw unknownParam(operationId, params, `--${name}`);
  }
  for (const pair of (flags.param as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`-p expects name=value (got "${pair}").`);
    const param = paramNamed(params, pair.slice(0, eq));
    if (!param) throw unknownParam(operationId, params, `-p ${pair.slice(0, eq)}`);
    add(param, `-p ${pair.slice(0, eq)}`, pair.slice(eq + 1));
  }
  return { given: [...given.values()], flags: withDefaults(flags, options), help };
}

function findOption(options: OwnOption[], token: string): OwnOption | undefined {
  if (token.startsWith('--')) {
    const name = token.split('=')[0];
    return options.find((o) => o.long === name);
  }
  return options.find((o) => o.short !== undefined && token.startsWith(o.short) && (token.length === 2 || o.takesValue));
}

/** Applies one option at tokens[i] (its value attached or next); returns the index of the last word used. */
function take(option: OwnOption, token: string, tokens: string[], i: number, flags: Flags): number {
  const label = option.long ?? option.short!;
  if (!option.takesValue) {
    if (token.includes('=') || (option.short && token.startsWith(option.short) && token.length > 2 && !token.startsWith('--'))) {
      throw new UsageError(`${label} takes no value.`);
    }
    flags[option.key] = !option.negate;
    return i;
  }
  let value: string | undefined;
  let used = i;
  if (token.startsWith('--') && token.includes('=')) value = token.slice(token.indexOf('=') + 1);
  else if (!token.startsWith('--') && token.length > 2) value = token.slice(2);
  else {
    value = tokens[i + 1];
    used = i + 1;
  }
  if (value === undefined) throw new UsageError(`${label} needs a value.`);
  if (option.choices && !option.choices.includes(value)) throw new UsageError(`${label} expects one of: ${option.choices.join(', ')} (got "${value}").`);
  flags[option.key] = option.parse ? option.parse(value, flags[option.key] ?? option.defaultValue) : value;
  return used;
}

function withDefaults(flags: Flags, options: OwnOption[]): Flags {
  for (const option of options) {
    if (flags[option.key] !== undefined) continue;
    if (option.defaultValue !== undefined) flags[option.key] = option.defaultValue;
    else if (option.negate) flags[option.key] = true;
  }
  return flags;
}

/** Path before query before header when a name is used twice; header names are case-insensitive (RFC 9110). */
function paramNamed(params: ParamSpec[], name: string): ParamSpec | undefined {
  const order = ['path', 'query', 'header'];
  const sorted = [...params].sort((a, b) => order.indexOf(a.in) - order.indexOf(b.in));
  return sorted.find((p) => p.name === name) ?? sorted.find((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase());
}

function unknownParam(operationId: string, params: ParamSpec[], flag: string): UsageError {
  if (params.length === 0) return new UsageError(`${operationId} takes no parameters, so ${flag} means nothing to it.`);
  const name = flag.replace(/^(--|-p )/, '').toLowerCase();
  const close = params.filter((p) => p.name.toLowerCase().startsWith(name) || editDistance(p.name.toLowerCase(), name) <= Math.max(1, Math.floor(p.name.length / 4)));
  const hint = close.length > 0 ? ` Did you mean ${close.map((p) => `--${p.name}`).join(' or ')}?` : '';
  return new UsageError(`${operationId} has no parameter ${flag}.${hint} Its parameters: ${params.map((p) => `--${p.name}`).join(', ')}.`);
}

