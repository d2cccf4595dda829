/**
 * `--jq <expr>`: jq itself (1.7, compiled to WebAssembly, from the jq-web package), loaded only when the flag is
 * used. Output follows `jq -r`: strings print raw, other values as JSON, one per line — compact unless stdout is a
 * terminal, where jq's own two-space indentation is kept.
 *
 * jq-web runs jq's main() once per call: each call compiles the expression again (about a millisecond), so callers
 * hand it whole arrays (`.[] | (expr)` over a page of items) rather than one item at a time.
 */
import { PlatError, UsageError } from './errors.js';
import { importPackage } from './esm.js';
import { sanitize } from './text.js';

interface JqWeb {
  raw(input: string, filter: string, flags?: string[]): string | undefined;
}
type JqError = Error & { exitCode?: number; stderr?: string };

export interface JqProgram {
  /** Runs the expression on one JSON document; the output text, each result on its own line (ending in \n). */
  apply(json: string): string;
  /** Runs the expression on each element of a JSON array (the array's text); the same output as apply per element. */
  applyEach(jsonArray: string): string;
}

/**
 * The most JSON text jq is given at once. jq-web's WebAssembly heap needs about 35 times its input (measured: 4 MiB
 * peaked at 202 MiB, 16 at 598, 32 at 1,128; 64 MiB ran out of memory and aborted), and runs synchronously: past this
 * plat refuses in its own words rather than grow toward an abort.
 */
export const MAX_JQ_INPUT_CHARS = 8 * 1024 * 1024;

export class JqInputTooLarge extends PlatError {}

export function jqInputTooLarge(what: string): JqInputTooLarge {
  return new JqInputTooLarge(
    `${what} is larger than ${MAX_JQ_INPUT_CHARS / 1024 / 1024} MiB, more than --jq takes at once. Save it (plat call … > file) and run jq on the file, or use --paginate --ndjson --jq, which filters item by item.`,
  );
}

/** jq exits 3 for a compile error (the expression), 5 for a runtime one (the data). */
const COMPILE_ERROR = 3;

let loading: Promise<JqWeb> | undefined;
function loadJq(): Promise<JqWeb> {
  // The package's export is a promise of the instantiated WebAssembly module.
  loading ??= importPackage<{ default: Promise<JqWeb> }>('jq-web').then((mod) => mod.default);
  return loading;
}

/**
 * Loads jq and checks the expression without running it on anything, so a typo fails (exit 2, with the line and
 * column) before any request is made.
 */
export async function compileJq(expression: string, options: { pretty: boolean }): Promise<JqProgram> {
  const jq = await loadJq();
  const flags = options.pretty ? ['-r'] : ['-r', '-c'];
  // Never evaluated: `if false` still compiles its branch, which is all the check needs. The expression goes on a
  // line of its own so a trailing `# comment` cannot swallow the closing parenthesis; hence the line offset of 1.
  run(jq, 'null', `if false then (\n${expression}\n) else empty end`, ['-c'], expression, 1);
  return {
    apply: (json) => run(jq, json, expression, flags, expression, 0),
    applyEach: (json) => run(jq, json, `.[] | (\n${expression}\n)`, flags, expression, 1),
  };
}

function run(jq: JqWeb, input: string, program: string, flags: string[], expression: string, lineOffset: number): string {
  if (input.length > MAX_JQ_INPUT_CHARS) throw jqInputTooLarge('The JSON for --jq');
  // jq-web's Emscripten runtime sets process.exitCode as a C program would, and only puts it back when it was set.
  const exitCode = process.exitCode;
  try {
    const out = jq.raw(input, program, [...flags]);
    return out === undefined ? '' : `${out}\n`;
  } catch (error) {
    const err = error as JqError;
    const stderr = String(err.stderr ?? err.message ?? '').replace(/^Non-zero exit code: \d+\n?/, '');
    if (err.exitCode === COMPILE_ERROR) throw compileError(stderr, expression, lineOffset);
    const message = stderr.replace(/^jq: error \(at [^)]*\): /, '').split('\n')[0]?.trim() || 'jq failed';
    throw new PlatError(`--jq failed on the response: ${bounded(message)}.`);
  } finally {
    process.exitCode = exitCode;
  }
}

/**
 * jq 1.7 reports "<message> at <top-level>, line N:" then the line, padded with as many spaces as the error's
 * column (its caret line is not printed): both are turned into "line N, column C" and a caret under the spot.
 */
function compileError(stderr: string, expression: string, lineOffset: number): UsageError {
  const match = /^jq: error: (.*?) at <top-level>, line (\d+):\n(.*)$/m.exec(stderr);
  if (!match) {
    const first = stderr.split('\n').find((l) => l.startsWith('jq: error')) ?? stderr.split('\n')[0] ?? '';
    return new UsageError(`--jq: ${bounded(first.replace(/^jq: error: /, '').replace(/ at <top-level>.*$/, ''))}.`);
  }
  const [, what, lineText, shown] = match;
  const lines = expression.split('\n');
  let line = Number(lineText) - lineOffset;
  let column = 0;
  const past = line > lines.length;
  if (past) {
    // Past the expression (an unclosed bracket is noticed at the wrapper's closing line): point at its end.
    line = lines.length;
    column = lines[line - 1]!.length;
  } else if (line >= 1) {
    const text = lines[line - 1]!;
    column = shown!.startsWith(text) ? Math.min(text.length, shown!.length - text.length) : 0;
  } else {
    line = 1;
  }
  const source = lines[line - 1]!;
  const where = expression.includes('\n') ? `line ${line}, column ${column + 1}` : `column ${column + 1}`;
  let message = what!.replace(/ \(Unix shell quoting issues\?\)/, '');
  // What jq met past the end is plat's wrapper, not the user's: say that the expression ended too early.
  if (past) message = message.replace(/unexpected [^,]+/, 'unexpected end of the expression');
  return new UsageError(`--jq: ${bounded(message)} at ${where}:\n  ${source}\n  ${' '.repeat(column)}^`);
}

/** jq's messages quote the data (server-supplied): made safe to print, and bounded. */
function bounded(text: string): string {
  return sanitize(text, 300);
}
