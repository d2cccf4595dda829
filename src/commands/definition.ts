/**
 * What each command's definition (`<command>.define.ts`, beside the command's run) is handed by the program that
 * lists it (src/cli.ts), the Command they are made of, and the pieces of help text they share. A definition declares the command's arguments,
 * options, help, examples and completion hints (`completes()`), and loads its run with import() in its action: it
 * is read on every start that builds the program, its run only when the command runs.
 */
import { Command, Option, type AddHelpTextContext, type AddHelpTextPosition, type OutputConfiguration } from 'commander';
import { collect, completes } from '../completion/value-kinds.js';
import type { Context } from '../context.js';
import { fitHelp } from '../help/fit.js';

export interface Definitions {
  /**
   * The command's options, arguments, help and action, added by `definition` now or (when the program is built
   * lazily, as a run builds it) when the command is dispatched or its help is written.
   */
  lazily(command: Command, definition: (command: Command) => unknown): Command;
  /** The context a command runs in, made from the global options given with it. */
  contextFor(command: Command): Context;
  /** Every command defined now, for what describes the whole program (plat completion). */
  defineAll(): void;
  /**
   * Options a command shows but leaves to commands it makes itself (plat op's, which the command made for the
   * operation named parses): its help and the completions read them.
   */
  showOptions(command: Command, options: readonly Option[]): void;
  /** plat's version (plat version prints it). */
  version: string;
}

/**
 * A Command whose added help text (examples, notes) is fitted to the terminal's width when it is shown, as the
 * help commander formats is (configureHelp below); every command is made by it (commander's createCommand).
 */
export class FittedCommand extends Command {
  override createCommand(name?: string): Command {
    return new FittedCommand(name);
  }

  override addHelpText(position: AddHelpTextPosition, text: string | ((context: AddHelpTextContext) => string)): this {
    return super.addHelpText(position, (context) => {
      const output = this.configureOutput();
      const width = (context.error ? output.getErrHelpWidth : output.getOutHelpWidth)?.() ?? 80;
      return fitHelp(typeof text === 'function' ? text(context) : text, width);
    });
  }
}

/**
 * commander's errors, with a pointer where a habit from another tool misled: kubectl's and gcloud's `-o json` (or
 * --output) is plat's --json. Still a usage error (exit 2), in commander's words with the way to say it in plat's.
 */
export function withHints(output: OutputConfiguration): OutputConfiguration {
  const write = output.outputError ?? ((message: string, to: (text: string) => void) => to(message));
  return {
    ...output,
    outputError: (message, to) => {
      const flag = /^error: unknown option '(-o\S*|--output(?:=\S*)?)'/.exec(message)?.[1];
      if (flag === undefined) return write(message, to);
      write(`error: unknown option '${flag}': for machine-readable output, plat takes --json (as in plat status --json).\n`, to);
    },
  };
}

/** --for <operationId>, as login and mcp take it: operations named, repeated or in one list, completed from plat op. */
export function forOperations(what: string): Option {
  return completes(new Option('--for <operationId>', `${what}; repeat, or separate with spaces or commas`).argParser(collect), 'operations');
}

/**
 * Help text with examples, one `$ plat …` line each; a trailing `# …` (after two spaces) explains the line. Examples
 * stay within 80 columns, to be copied whole: the comments are aligned at a column that lets them fit, and one that
 * cannot fit beside its command goes on the line below (completion/model.ts joins it back for the man page).
 */
export function examples(...lines: string[]): string {
  const WIDTH = 80;
  const parsed = lines.map((line) => {
    const match = /^(.*?)\s{2,}# (.*)$/.exec(line);
    return match ? { command: match[1]!, comment: match[2]! } : { command: line, comment: undefined };
  });
  const start = (command: string) => '  $ '.length + command.length + 2;
  const fitsAt = (column: number, comment: string) => column + '# '.length + comment.length <= WIDTH;
  const column = Math.max(0, ...parsed.filter((p) => p.comment !== undefined && fitsAt(start(p.command), p.comment)).map((p) => start(p.command)));
  const shown = parsed.map(({ command, comment }) => {
    const line = `  $ ${command}`;
    if (comment === undefined) return line;
    if (start(command) <= column && fitsAt(column, comment)) return `${line.padEnd(column)}# ${comment}`;
    if (fitsAt(start(command), comment)) return `${line}  # ${comment}`;
    return `${line}\n      # ${comment}`;
  });
  return `\nExamples:\n${shown.join('\n')}`;
}
