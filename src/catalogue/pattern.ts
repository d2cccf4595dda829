/**
 * Regular expressions from an API description (a parameter's or a body field's `pattern`) run on RE2's engine, never
 * on V8's: a server's `^(a+)+$` takes exponential time in a backtracking engine, in one synchronous loop that
 * neither Ctrl-C nor SIGTERM can end. re2js (RE2 ported to JavaScript) matches in time linear in the input, and
 * refuses what needs backtracking (lookaround, backreferences): such a pattern is not checked here (the server still
 * judges the value). Pure JavaScript, so nothing native to build or download; loaded only when a pattern is met.
 */
import { importPackage } from '../esm.js';

/** A compiled pattern: true when it matches anywhere in the value (JSON Schema's `pattern` is not anchored). */
export type PatternTest = (value: string) => boolean;
/** Compiles a document's pattern; undefined when RE2 cannot run it (then plat does not check it). */
export type PatternEngine = (pattern: string) => PatternTest | undefined;

/** Longer than this is not a pattern a person wrote for a parameter: not checked. */
const MAX_PATTERN_LENGTH = 1000;

interface Re2js {
  RE2JS: { compile(pattern: string, flags?: number): { test(input: string): boolean } };
}

let loading: Promise<PatternEngine> | undefined;

export function loadPatternEngine(): Promise<PatternEngine> {
  loading ??= importPackage<Re2js>('re2js').then(({ RE2JS }) => {
    const cache = new Map<string, PatternTest | undefined>();
    return (pattern: string) => {
      if (cache.has(pattern)) return cache.get(pattern);
      let test: PatternTest | undefined;
      if (pattern.length <= MAX_PATTERN_LENGTH) {
        try {
          const re = RE2JS.compile(pattern);
          test = (value) => re.test(value);
        } catch {
          test = undefined;
        }
      }
      cache.set(pattern, test);
      return test;
    };
  });
  return loading;
}

/**
 * ajv's `code.regExp`: the same engine for the body's schema. A pattern RE2 refuses matches anything (ajv would
 * otherwise refuse the whole schema, and with it every other check of the body).
 */
export function ajvRegExp(engine: PatternEngine): (pattern: string, flags: string) => { test(value: string): boolean } {
  return (pattern) => {
    const test = engine(pattern);
    // ajv keys compiled patterns by toString(): without one, every pattern would share the key "[object Object]"
    // and the first compiled would silently stand for all (the check passed everything).
    return { test: test ?? (() => true), toString: () => pattern };
  };
}
