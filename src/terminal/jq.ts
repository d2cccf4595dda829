/**
 * `--jq <expr>`: jq itself (1.7, compiled to WebAssembly, from the jq-web package), loaded only when the flag is
 * used. Output follows `jq -r`: strings print raw, other values as JSON, one per line — compact unless stdout is a
 * terminal, where jq's own two-space indentation is kept.
 *
 * jq-web runs jq's main() once per call: each call compiles the expression again (about a millisecond), so callers
 * hand it whole arrays (`.[] | (expr)` over a page of items) rather than one item at a time.
 *
 * jq runs on a worker thread: it is synchronous, and a few MiB of a server's JSON keep it busy for seconds, which on
 * the main thread would hold Ctrl-C (and SIGTERM) until it finished. The main thread only waits for its answer, so
 * an interruption terminates the worker at once.
 */
import { InterruptedError, PlatError, UsageError } from '../errors.js';
import { sanitize } from './text.js';

type JqError = Error & { exitCode?: number; stderr?: string };
/** jq's main() on the worker: its output, or what it threw. */
type JqRun = (input: string, program: string, flags: string[]) => Promise<string | undefined>;

export interface JqProgram {
  /** Runs the expression on one JSON document; the output text, each result on its own line (ending in \n). */
  apply(json: string): Promise<string>;
  /** Runs the expression on each element of a JSON array (the array's text); the same output as apply per element. */
  applyEach(jsonArray: string): Promise<string>;
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

/**
 * The worker's code (CommonJS): loads jq-web (whose export is a promise of the instantiated WebAssembly module) and
 * runs jq's main() per message. jq-web's Emscripten runtime sets process.exitCode as a C program would: on the
 * worker that is the worker's own, never plat's.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = require(workerData.path);
parentPort.on('message', async ({ id, input, program, flags }) => {
  const jq = await ready;
  try {
    parentPort.postMessage({ id, out: jq.raw(input, program, flags) });
  } catch (e) {
    parentPort.postMessage({ id, error: { message: String((e && e.message) || e), stderr: e && e.stderr, exitCode: e && e.exitCode } });
  }
});
`;

/** Where jq-web is, for the worker's require(): beside plat's bundle (its own __filename), or from the working dir. */
function jqWebPath(): string {
  const { createRequire } = process.getBuiltinModule('node:module') as typeof import('node:module');
  const from = typeof __filename === 'string' && __filename !== '' ? __filename : `${process.cwd()}/`;
  return createRequire(from).resolve('jq-web');
}

/** A jq worker that ends with Ctrl-C: every pending run then rejects as an interruption. */
function startJq(signal: AbortSignal | undefined): JqRun {
  const { Worker } = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const worker = new Worker(WORKER, { eval: true, workerData: { path: jqWebPath() } });
  const pending = new Map<number, { resolve: (out: string | undefined) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  // Held (ref) only while a run is pending, so an idle worker never keeps plat alive.
  worker.unref();
  const settle = (id: number) => {
    const entry = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    return entry;
  };
  worker.on('message', ({ id, out, error }: { id: number; out?: string; error?: { message: string; stderr?: string; exitCode?: number } }) => {
    const entry = settle(id);
    if (!entry) return;
    if (error) entry.reject(Object.assign(new Error(error.message), { stderr: error.stderr, exitCode: error.exitCode }));
    else entry.resolve(out);
  });
  const failAll = (error: Error) => {
    for (const id of [...pending.keys()]) settle(id)?.reject(error);
  };
  worker.on('error', (error) => failAll(new PlatError(`--jq could not run: ${sanitize(error.message, 200)}.`, undefined, { cause: error })));
  // A worker that ends without an error event (killed, out of memory) must not leave a run waiting for ever.
  worker.on('exit', (code) => failAll(new PlatError(`--jq stopped before it finished (its worker exited with ${code}).`)));
  signal?.addEventListener(
    'abort',
    () => {
      void worker.terminate();
      failAll(new InterruptedError());
    },
    { once: true },
  );
  return (input, program, flags) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new InterruptedError());
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, input, program, flags });
    });
}

/**
 * Starts jq and checks the expression without running it on anything, so a typo fails (exit 2, with the line and
 * column) before any request is made. `signal` (Ctrl-C) ends jq wherever it is.
 */
export async function compileJq(expression: string, options: { pretty: boolean; signal?: AbortSignal }): Promise<JqProgram> {
  const jq = startJq(options.signal);
  const flags = options.pretty ? ['-r'] : ['-r', '-c'];
  // Never evaluated: `if false` still compiles its branch, which is all the check needs. The expression goes on a
  // line of its own so a trailing `# comment` cannot swallow the closing parenthesis; hence the line offset of 1.
  await run(jq, 'null', `if false then (\n${expression}\n) else empty end`, ['-c'], expression, 1);
  return {
    apply: (json) => run(jq, json, expression, flags, expression, 0),
    applyEach: (json) => run(jq, json, `.[] | (\n${expression}\n)`, flags, expression, 1),
  };
}

async function run(jq: JqRun, input: string, program: string, flags: string[], expression: string, lineOffset: number): Promise<string> {
  if (input.length > MAX_JQ_INPUT_CHARS) throw jqInputTooLarge('The JSON for --jq');
  try {
    const out = await jq(input, program, [...flags]);
    return out === undefined ? '' : `${out}\n`;
  } catch (error) {
    if (error instanceof PlatError) throw error;
    const err = error as JqError;
    const stderr = String(err.stderr ?? err.message ?? '').replace(/^Non-zero exit code: \d+\n?/, '');
    if (err.exitCode === COMPILE_ERROR) throw compileError(stderr, expression, lineOffset);
    const message = stderr.replace(/^jq: error \(at [^)]*\): /, '').split('\n')[0]?.trim() || 'jq failed';
    throw new PlatError(`--jq failed on the response: ${bounded(message)}.`);
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
