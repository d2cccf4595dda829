/**
 * The commander program: the global options and the root help, then every command in its group, each defined by
 * its own `<command>.define.ts` beside its run under commands/ (options, help, examples, completion hints, and its
 * run imported only when it runs: `plat --version` loads nothing but these definitions).
 *
 * The program is also the single source of the shell completions (`plat completion <shell>`) and the man page:
 * what an option's value can be is recorded with `completes()`, next to the option in its definition.
 */
import { Help, Option, type Command, type OutputConfiguration } from 'commander';
import { defineLogin } from './commands/auth/login.define.js';
import { defineLogout } from './commands/auth/logout.define.js';
import { defineRefresh } from './commands/auth/refresh.define.js';
import { defineStatus } from './commands/auth/status.define.js';
import { defineSwitch } from './commands/auth/switch.define.js';
import { defineToken } from './commands/auth/token.define.js';
import { defineWhoami } from './commands/auth/whoami.define.js';
import { defineBatch } from './commands/batch/batch.define.js';
import { defineApi } from './commands/call/api.define.js';
import { defineCall } from './commands/call/call.define.js';
import { defineCompletion, defineComplete } from './commands/completion.define.js';
import { defineDiscover } from './commands/discover.define.js';
import { defineExec } from './commands/exec.define.js';
import { defineHelp } from './commands/help.define.js';
import { defineMcp } from './commands/mcp.define.js';
import { defineOp } from './commands/op/op.define.js';
import { defineProxy } from './commands/proxy.define.js';
import { defineRoot } from './commands/root.define.js';
import { defineScopes } from './commands/scopes/scopes.define.js';
import { defineVersion } from './commands/version.define.js';
import { FittedCommand, withHints, type Definitions } from './commands/definition.js';
import type { Context, Globals } from './context.js';
import { fitHelp, formatHelpItem } from './help/fit.js';

export type ContextFactory = (globals: Globals) => Context;

export interface BuildOptions {
  /**
   * Each command's options, arguments, help text and action are added when it is dispatched, or when the whole
   * program is described (root help, completions): defining all of them costs ~0.7 ms of every start, and a run
   * dispatches one (main.ts). Without it (the default) the program is whole at once, for what reads it entire.
   */
  lazy?: boolean;
  /** Where commander writes help and its errors (main.ts: plat's io); set before the commands, which inherit it. */
  output?: OutputConfiguration;
}

export function buildProgram(version: string, makeContext: ContextFactory, options: BuildOptions = {}): Command {
  /**
   * Options a command shows but leaves to commands it makes itself: plat op's, which the command made for the
   * operation named parses (commands/op/command.ts). Its help and the completions (completion/model.ts) read them
   * through commander's Help, below.
   */
  const shownOptions = new WeakMap<Command, readonly Option[]>();
  const program: Command = new FittedCommand('plat')
    .description('Sign in to the learning platform API with OAuth 2.0 / OpenID Connect, then call it.')
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      // A command defined lazily is defined before its help is written; the root help lists every command's
      // arguments and whether it has options, so it needs them all.
      formatHelp(command, helper): string {
        if (command === program) defineAll();
        else define(command);
        return fitHelp(Help.prototype.formatHelp.call(helper, command, helper), helper.helpWidth ?? 80);
      },
      // commander stops wrapping when the term column leaves the descriptions under 40 columns: capped instead.
      formatItem(term, termWidth, description, helper): string {
        return formatHelpItem(term, termWidth, description, helper.helpWidth ?? 80);
      },
      visibleOptions(command) {
        return shownOptions.get(command)?.slice() ?? Help.prototype.visibleOptions.call(this, command);
      },
      subcommandTerm(command) {
        const term = Help.prototype.subcommandTerm.call(this, command);
        return shownOptions.has(command) ? `${command.name()} [options]${term.slice(command.name().length)}` : term;
      },
    })
    // Errors and help end in an exception main.ts maps to an exit code: it is the one place plat exits.
    .exitOverride()
    .configureOutput(withHints(options.output ?? {}))
    .showSuggestionAfterError(true)
    .version(version, '--version', 'print the version')
    .helpOption('-h, --help', 'show help');
  defineRoot(program);

  program.hook('preSubcommand', (_program, command) => define(command));

  /** Definitions not made yet (BuildOptions.lazy): made at dispatch, or when help is written (formatHelp above). */
  const definitions = new Map<Command, () => void>();
  const lazily = (command: Command, definition: (command: Command) => unknown): Command => {
    if (options.lazy) definitions.set(command, () => definition(command));
    else definition(command);
    return command;
  };
  const define = (command: Command) => {
    const definition = definitions.get(command);
    definitions.delete(command);
    definition?.();
  };
  const defineAll = () => {
    for (const command of [...definitions.keys()]) define(command);
  };

  const contextFor = (command: Command) => {
    const o = command.optsWithGlobals() as Record<string, unknown>;
    return makeContext({
      baseUrl: o.baseUrl as string | undefined,
      profile: (o.profile as string | undefined) ?? '',
      json: Boolean(o.json),
      verbose: Boolean(o.verbose),
    });
  };

  const the: Definitions = {
    lazily,
    contextFor,
    defineAll,
    showOptions: (command, shown) => shownOptions.set(command, shown),
    version,
  };
  const groups: ReadonlyArray<readonly [string, ReadonlyArray<(program: Command, the: Definitions) => void>]> = [
    ['Session:', [defineLogin, defineWhoami, defineStatus, defineSwitch, defineRefresh, defineToken, defineExec, defineLogout]],
    ['The API:', [defineCall, defineApi, defineOp, defineScopes, defineBatch, defineDiscover, defineMcp, defineProxy]],
    // plat version and plat __complete are hidden; plat help's own command replaces commander's.
    ['Shell:', [defineCompletion, defineVersion, defineComplete, defineHelp]],
  ];
  for (const [group, commands] of groups) {
    program.commandsGroup(group);
    for (const define of commands) define(program, the);
  }

  program.addOption(new Option('--debug').hideHelp());
  return program;
}
