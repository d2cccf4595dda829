/**
 * The three commands scripts run most, each with one runner that loads its module on use, as their definitions'
 * actions load it (commands/call/call.define.ts, auth/token.define.ts, auth/whoami.define.ts); main.ts calls them straight from argv for the plain forms (`plat call <method> <path>`,
 * `plat token`, `plat whoami`, no option anywhere), where commander would find the same command, the same words
 * and no flags. Skipping commander there saves building the program and loading commander's code: ~3 ms of every
 * such start, 3 % of `plat call` (src/README.md, "Start-up"). Anything else, however close, goes to commander, which
 * stays the one definition of the command line; test/cli/dispatch.test.ts holds the two against each other (the
 * same words, with and without an option that sends them to commander: the same requests, output and exit code).
 *
 * Frozen: no new plain forms. Each is a second parser of its words, which commander's must be kept equal to; these
 * three are what scripts run in loops, where the milliseconds add up. Anything else starts commander.
 */
import type { Context, Globals } from './context.js';
import type { CallFlags } from './requests/prepare.js';
import type { TokenFlags } from './commands/auth/token.js';

type ContextFactory = (globals: Globals) => Context;
/**
 * In dist/plain-<command>.cjs, the one plain form that bundle runs (src/build/build.mjs); undeclared elsewhere (the
 * whole program, the tests). A constant in that bundle, so esbuild drops the other forms' branches below, and with
 * them their commands' modules: each plain start reads and compiles its own command alone. Spelled out in each
 * condition: esbuild folds a constant there, not through a variable.
 */
declare const PLAT_PLAIN_COMMAND: 'call' | 'token' | 'whoami';
/** The context is made after the command's module is loaded, as commander's actions do. */
type LazyContext = () => Context;

async function runCall(ctx: LazyContext, method: string, target: string, flags: CallFlags): Promise<void> {
  const { run } = await import('./commands/call/call.js');
  await run(ctx(), method, target, flags);
}

async function runToken(ctx: LazyContext, flags: TokenFlags): Promise<void> {
  const { run } = await import('./commands/auth/token.js');
  await run(ctx(), flags);
}

async function runWhoami(ctx: LazyContext): Promise<void> {
  const { run } = await import('./commands/auth/whoami.js');
  await run(ctx());
}

/** What commander's actions hand a command when no global option is given (cli.ts, contextFor). */
const NO_GLOBAL_OPTIONS: Globals = Object.freeze({ baseUrl: undefined, profile: '', json: false, verbose: false });

/** A plain form: the command and its words, as commander would hand them on with no option given. */
export interface PlainForm {
  command: 'call' | 'token' | 'whoami';
  args: readonly string[];
}

/**
 * argv's words (after node and the script) when they are one of the plain forms, else undefined and commander
 * parses them. A word that starts with '-' anywhere (an option, `--`, `-` for stdin) means commander.
 */
export function plainForm(words: readonly string[]): PlainForm | undefined {
  if (words.some((word) => word.startsWith('-'))) return undefined;
  const [command, ...args] = words;
  // A per-command bundle runs (and so says it runs: main.ts, runsPlainly) its own command alone.
  if (typeof PLAT_PLAIN_COMMAND === 'string' && command !== PLAT_PLAIN_COMMAND) return undefined;
  if (command === 'call' && args.length === 2) return { command, args };
  if ((command === 'token' || command === 'whoami') && args.length === 0) return { command, args };
  return undefined;
}

/** The run for argv's words when they are a plain form, else undefined. */
export function plainInvocation(words: readonly string[], makeContext: ContextFactory): (() => Promise<void>) | undefined {
  const form = plainForm(words);
  if (!form) return undefined;
  const ctx = () => makeContext(NO_GLOBAL_OPTIONS);
  if ((typeof PLAT_PLAIN_COMMAND !== 'string' || PLAT_PLAIN_COMMAND === 'call') && form.command === 'call') return () => runCall(ctx, form.args[0]!, form.args[1]!, {});
  if ((typeof PLAT_PLAIN_COMMAND !== 'string' || PLAT_PLAIN_COMMAND === 'token') && form.command === 'token') return () => runToken(ctx, {});
  if ((typeof PLAT_PLAIN_COMMAND !== 'string' || PLAT_PLAIN_COMMAND === 'whoami') && form.command === 'whoami') return () => runWhoami(ctx);
  return undefined;
}
