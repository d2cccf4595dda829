/**
 * plat op's words, parsed by commander. Which of them are plat's options and which the operation's parameters depends
 * on the operation named, known only once the document is read: so `plat op` (op.define.ts) hands its words on as they
 * are, and here a Command is made for them — one for the options before the first word; then one for the operation
 * named, its parameters as options with plat op's own (plat call's) beside them, as restish makes its commands from
 * the document; or one for a listing's filter. Combined short flags (-iH 'a: b'), --name=value and the rest then
 * work as they do in plat call, because the same parser reads them.
 */
import { Command, Option } from 'commander';
import type { OperationDetail } from '../../catalogue/openapi.js';
import type { ParamSpec } from '../../catalogue/operation-shape.js';
import { typeOf } from '../../catalogue/param-check.js';
import { UsageError } from '../../errors.js';
import { didYouMean, sanitize } from '../../terminal/text.js';
import { fitHelp } from '../../help/fit.js';
import { renderOpHelp } from './help.js';
import type { GivenParam } from '../../requests/operation.js';
import { opOptions } from '../call/options.js';

type Flags = Record<string, unknown>;
type Operation = OperationDetail & { operationId: string };

/**
 * A parameter name commander can take as a long flag, and safe to quote in its messages: no space, comma or | (which
 * separate flags), no = or <> (values), no control or format character, not starting with -. Any other name is
 * given with -p name=value.
 */
const FLAG_NAME = /^[^\s,|=<>\p{C}-][^\s,|=<>\p{C}]*$/u;

/** A Command for some of plat op's words, with plat op's settings: output through plat's io, errors thrown to main.ts. */
function wordsCommand(op: Command, name: string): Command {
  return new Command(name).copyInheritedSettings(op).helpOption(false);
}

/** --help as a plain flag: what it means depends on what follows, so the caller decides. */
const helpFlag = () => new Option('-h, --help', 'show help');

/** plat op's options, each defaulting to what the options before the operationId gave (repeatable ones add up). */
function opOptionsAfter(leading: Flags): Option[] {
  const options = opOptions();
  for (const option of options) {
    const value = leading[option.attributeName()];
    if (value !== undefined) option.default(value);
  }
  return options;
}

export interface Leading {
  /** plat op's options before the first word. */
  flags: Flags;
  help: boolean;
  /** The operationId, or the first word of a filter. */
  first: string | undefined;
  /** The words after it, unparsed. */
  rest: string[];
}

/** The options before the first word (an operationId or a filter), and the words from there on. */
export function parseLeading(op: Command, words: string[]): Leading {
  const command = wordsCommand(op, 'op')
    .argument('[words...]')
    .passThroughOptions();
  // An unknown option here is most often a parameter typed before the operationId: say where it goes. Only then:
  // after a missing value (`plat op --timeout`) the hint would point the wrong way.
  const output = command.configureOutput();
  command.configureOutput({
    outputError: (text, write) => {
      const hint = /^error: unknown option /.test(text) ? 'Name the operation first: plat op <operationId> --<parameter> value.\n' : '';
      (output.outputError ?? ((t: string, w: (t: string) => void) => w(t)))(`${text}${hint}`, write);
    },
  });
  for (const option of [helpFlag(), ...opOptions()]) command.addOption(option);
  command.parse(words, { from: 'user' });
  const { help, ...flags } = command.opts();
  const [first, ...rest] = command.args;
  return { flags, help: Boolean(help), first, rest };
}

/**
 * `plat op <filter…>` once the first word is no operationId: every word filters, and plat op's options may stand
 * anywhere. Undefined when a word is an option plat op does not have (the words were meant for an operation).
 */
export function parseFilter(op: Command, words: string[], leading: Flags): { filter: string; flags: Flags; help: boolean } | undefined {
  const command = wordsCommand(op, 'op').argument('[filter...]').allowUnknownOption();
  for (const option of [helpFlag(), ...opOptionsAfter(leading)]) command.addOption(option);
  command.parse(words, { from: 'user' });
  if (command.args.some(isOption)) return undefined;
  const { help, ...flags } = command.opts();
  return { filter: command.args.join(' '), flags, help: Boolean(help) };
}

/**
 * The words after the operationId: its parameters (`--<name> value`, a boolean alone) and plat op's options. A long
 * name the operation uses for a parameter is the parameter; plat's option of that name keeps its short form (-i for
 * --include). `--help` prints the operation's help (help.ts) and ends, as commander's help does.
 */
export function parseOperation(op: Command, operation: Operation, words: string[], leading: Flags, options: { help?: boolean } = {}): { given: GivenParam[]; flags: Flags } {
  const id = operation.operationId;
  const command = wordsCommand(op, id)
    .helpOption('-h, --help', 'show help')
    // Written from the document, whose descriptions can be any length: fitted to the terminal as plat's own help is.
    .configureHelp({ formatHelp: (_command, helper) => fitHelp(renderOpHelp(operation), helper.helpWidth ?? 80) })
    // A word neither the operation's nor plat's is answered below, in plat op's own sentences.
    .allowUnknownOption()
    .allowExcessArguments();

  const given = new Map<ParamSpec, GivenParam>();
  const add = (param: ParamSpec, flag: string, value: string) => {
    const entry = given.get(param) ?? { param, flag, values: [] };
    entry.values.push(value);
    given.set(param, entry);
  };

  // The parameters' flags first: they win a long name from plat's options.
  const paramFlags = new Map<string, ParamSpec>();
  for (const param of byPrecedence(operation.parameters)) {
    // Header names are case-insensitive (RFC 9110): the lower-case spelling reaches the header too.
    const spellings = param.in === 'header' ? [param.name, param.name.toLowerCase()] : [param.name];
    for (const name of spellings) if (FLAG_NAME.test(name) && !paramFlags.has(`--${name}`)) paramFlags.set(`--${name}`, param);
  }
  const platOptions: Array<{ option: Option; key: string }> = [];
  for (const option of opOptionsAfter(leading)) {
    const key = option.attributeName();
    if (!paramFlags.has(option.long!)) platOptions.push({ option, key });
    else if (option.short) platOptions.push({ option: shortOnly(option), key });
  }
  // Commander keeps values by attribute name: a parameter that would share one with plat's option (--typedField,
  // -F's) would mix the two, so it is left to -p.
  const platKeys = new Set(platOptions.map(({ option }) => option.attributeName()));
  for (const { option } of platOptions) command.addOption(option);
  for (const [flag, param] of paramFlags) {
    const option = paramOption(param, flag, (value) => add(param, flag, value));
    if (!platKeys.has(option.attributeName())) command.addOption(option);
  }

  if (options.help) command.help();
  command.parse(words, { from: 'user' });
  const stray = command.args[0];
  if (stray !== undefined) {
    if (stray.startsWith('--')) {
      const flag = stray.split('=')[0]!;
      // A parameter no option spells that way (a header in another case, a name left to -p above).
      const param = paramNamed(operation.parameters, flag.slice(2));
      if (param) throw new UsageError(`${flag} is not an option plat op can take for ${id}'s parameter ${param.name}: give it as -p '${param.name}=<value>'.`);
      if (flag === '--output') throw new UsageError(`${id} has no parameter --output. ${JSON_HINT}`);
      throw refusedParam(operation, flag.slice(2)) ?? unknownParam(id, operation.parameters, flag);
    }
    if (/^-o/.test(stray)) throw new UsageError(`Unknown option -o. ${JSON_HINT}`);
    if (isOption(stray)) throw new UsageError(`Unknown option ${stray}. plat op ${id} --help lists the operation's parameters and plat's options.`);
    throw new UsageError(`"${stray}" is not a parameter: give each as --<name> value (plat op ${id} --help lists them).`);
  }

  const values = command.opts();
  const flags: Flags = {};
  for (const { option, key } of platOptions) if (values[option.attributeName()] !== undefined) flags[key] = values[option.attributeName()];
  for (const pair of (flags.param as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`-p expects name=value (got "${pair}").`);
    const param = paramNamed(operation.parameters, pair.slice(0, eq));
    if (!param) throw refusedParam(operation, pair.slice(0, eq)) ?? unknownParam(id, operation.parameters, `-p ${pair.slice(0, eq)}`);
    add(param, `-p ${pair.slice(0, eq)}`, pair.slice(eq + 1));
  }
  return { given: [...given.values()], flags };
}

const isOption = (word: string) => word.length > 1 && word.startsWith('-');

/** A parameter as an option: its values recorded in order as given; a boolean may stand alone (true). */
function paramOption(param: ParamSpec, flag: string, record: (value: string) => void): Option {
  const type = typeOf(param.schema);
  const valueName = type && /^[a-z]+$/.test(type) ? type : 'value';
  const option = new Option(`${flag} ${type === 'boolean' ? '[boolean]' : `<${valueName}>`}`, sanitize(param.description ?? '', 200));
  if (type === 'boolean') option.preset('true');
  return option.argParser((value: string) => {
    record(value);
    return value;
  });
}

/** plat's option by its short flag alone, when the operation has a parameter of its long name. */
function shortOnly(option: Option): Option {
  const short = new Option(`${option.short!}${option.required ? ' <value>' : ''}`, option.description);
  if (option.parseArg) short.argParser(option.parseArg);
  if (option.defaultValue !== undefined) short.default(option.defaultValue);
  return short;
}

/** Path before query before header when a name is used twice. */
function byPrecedence(params: ParamSpec[]): ParamSpec[] {
  const order = ['path', 'query', 'header'];
  return [...params].sort((a, b) => order.indexOf(a.in) - order.indexOf(b.in));
}

/** -p's name: as a flag would find it, and a header's in any case. */
function paramNamed(params: ParamSpec[], name: string): ParamSpec | undefined {
  const sorted = byPrecedence(params);
  return sorted.find((p) => p.name === name) ?? sorted.find((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase());
}

/** A header parameter the document names but plat never fills (http/header-rule.ts): the reason, not "unknown". */
function refusedParam(operation: Operation, name: string): UsageError | undefined {
  const refused = (operation.refusedHeaders ?? []).find((r) => r.name.toLowerCase() === name.trim().toLowerCase());
  return refused && new UsageError(`${operation.operationId}'s header parameter ${sanitize(refused.name, 100)} is not taken from input: ${refused.reason}.`);
}

/** kubectl's `-o json`, as cli.ts (withHints, commands/definition.ts) says it for every other command. */
const JSON_HINT = 'For machine-readable output, plat takes --json (as in plat status --json).';

function unknownParam(operationId: string, params: ParamSpec[], flag: string): UsageError {
  if (params.length === 0) return new UsageError(`${operationId} takes no parameters, so ${flag} means nothing to it.`);
  const name = flag.replace(/^(--|-p )/, '').toLowerCase();
  // Compared as flags, --name to --name, so the suggestion is the flag to type.
  const hint = didYouMean(`--${name}`, params.map((p) => `--${p.name}`));
  return new UsageError(`${operationId} has no parameter ${flag}.${hint} Its parameters: ${params.map((p) => `--${p.name}`).join(', ')}.`);
}
