/**
 * A shell-neutral description of the command line, read from the commander program itself, so the completion
 * scripts and the man page follow every change to a command's definition (each command's <command>.define.ts).
 */
import type { Argument, Command, Option } from 'commander';
import { HELP_TOPICS } from '../help/topics.js';
import { collect, HTTP_METHODS, valueKinds, type ValueKind } from './value-kinds.js';

/** How a value is completed: from plat at completion time, from a fixed list, as a file name, or not at all. */
export type Values =
  | { type: 'dynamic'; kind: 'scopes' | 'profiles' | 'paths' | 'base-urls' | 'operations' }
  | { type: 'list'; items: string[] }
  | { type: 'files' }
  /** a command line of its own: a program name first, then that program's own completion (as after sudo) */
  | { type: 'command-line' }
  | { type: 'none' };

export interface OptionSpec {
  long?: string;
  short?: string;
  /** The value's name as in the help (`url`, `scope`), when the option takes one. */
  valueName?: string;
  takesValue: boolean;
  repeatable: boolean;
  description: string;
  values: Values;
}

export interface ArgumentSpec {
  name: string;
  description: string;
  required: boolean;
  variadic: boolean;
  values: Values;
}

export interface CommandSpec {
  name: string;
  description: string;
  group: string;
  options: OptionSpec[];
  args: ArgumentSpec[];
  /** The help text's examples, without the `$ `. */
  examples: string[];
  /**
   * After its first argument (an operationId) the command takes that operation's parameters as `--<name> value`:
   * the scripts ask `plat __complete op-flags|op-values` for them, and treat an unknown `--<name>` as taking a value.
   */
  operationParams?: boolean;
}

export interface ProgramSpec {
  name: string;
  description: string;
  globalOptions: OptionSpec[];
  commands: CommandSpec[];
}

const HELP_OPTION: OptionSpec = {
  long: '--help',
  short: '-h',
  takesValue: false,
  repeatable: false,
  description: 'show help',
  values: { type: 'none' },
};

function valuesOf(target: Option | Argument, commandNames: string[]): Values {
  if (target.argChoices?.length) return { type: 'list', items: [...target.argChoices] };
  const kind: ValueKind | undefined = valueKinds.get(target);
  switch (kind) {
    case 'scopes':
    case 'profiles':
    case 'paths':
    case 'base-urls':
    case 'operations':
      return { type: 'dynamic', kind };
    case 'methods':
      return { type: 'list', items: [...HTTP_METHODS] };
    case 'commands':
      return { type: 'list', items: [...commandNames.filter((n) => n !== 'help'), ...HELP_TOPICS.map((t) => t.name)] };
    case 'files':
      return { type: 'files' };
    case 'command-line':
      return { type: 'command-line' };
    default:
      return { type: 'none' };
  }
}

function optionSpec(option: Option, commandNames: string[]): OptionSpec {
  const takesValue = option.required || option.optional;
  const valueName = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1];
  return {
    long: option.long,
    short: option.short,
    valueName: takesValue ? valueName : undefined,
    takesValue,
    repeatable: option.variadic || option.parseArg === (collect as unknown),
    description: option.description,
    values: takesValue ? valuesOf(option, commandNames) : { type: 'none' },
  };
}

function examplesOf(command: Command): string[] {
  // addHelpText('after', …) is kept as an event listener; ask commander for the text it would print.
  let text = '';
  // As wide as help goes (src/help/width.ts), whatever the terminal: the examples are read whole, never wrapped.
  const sink = { writeOut: (s: string) => (text += s), writeErr: (s: string) => (text += s), getOutHelpWidth: () => 100, getErrHelpWidth: () => 100 };
  const saved = command.configureOutput();
  command.configureOutput({ ...saved, ...sink });
  try {
    command.outputHelp();
  } finally {
    command.configureOutput(saved);
  }
  // An example's comment may be on the line below it (commands/definition.ts keeps examples within 80 columns): joined back here.
  const block = /\nExamples:\n((?: {2}\$ .*\n?| {6}# .*\n?)+)/.exec(text)?.[1] ?? '';
  const examples: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('  $ ')) examples.push(line.slice(4));
    else if (line.startsWith('      # ') && examples.length > 0) examples[examples.length - 1] += `  ${line.trim()}`;
  }
  return examples;
}

/** The program as completion scripts and the man page see it: visible commands and options only. */
export function describeProgram(program: Command): ProgramSpec {
  // What the help shows, through commander's Help (plat's own help command among them: cli.ts).
  const visible = program.createHelp().visibleCommands(program).filter((c) => program.commands.includes(c));
  const commandNames = visible.map((c) => c.name());
  const globalOptions = [
    ...program.options.filter((o) => !o.hidden).map((o) => optionSpec(o, commandNames)),
    HELP_OPTION,
  ];
  const commands: CommandSpec[] = visible.map((command) => ({
    name: command.name(),
    description: command.description(),
    group: command.helpGroup().replace(/:$/, ''),
    // A command may show options it leaves to a command it makes (plat op's, commands/op/op.define.ts): its Help knows them.
    options: [
      ...command
        .createHelp()
        .visibleOptions(command)
        .filter((o) => o.long !== HELP_OPTION.long)
        .map((o) => optionSpec(o, commandNames)),
      HELP_OPTION,
    ],
    operationParams: command.registeredArguments.some((a) => valueKinds.get(a) === 'operation-parameters') || undefined,
    args: command.registeredArguments.map((a) => ({
      name: a.name(),
      description: a.description,
      required: a.required,
      variadic: a.variadic,
      values: valuesOf(a, commandNames),
    })),
    examples: examplesOf(command),
  }));
  return { name: program.name(), description: program.description(), globalOptions, commands };
}

/** Every option that takes a value, as the shells see it on the command line (`--profile`, `-H`). */
export function valueFlags(options: OptionSpec[]): string[] {
  return options.filter((o) => o.takesValue).flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
}
