import { Argument, type Command } from 'commander';
import { examples, type Definitions } from './definition.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** plat completion <shell>; the run is ./completion.ts. */
export function defineCompletion(program: Command, the: Definitions): void {
  the.lazily(program.command('completion').description('print the shell completion script for bash, zsh or fish'), (cmd) =>
    cmd
      .addArgument(new Argument('<shell>', 'the shell: bash, zsh or fish').choices(SHELLS))
      .addHelpText(
        'after',
        examples(
          'source <(plat completion bash)                               # in ~/.bashrc',
          'plat completion bash > ~/.local/share/bash-completion/completions/plat',
          'plat completion zsh > "${fpath[1]}/_plat"                     # then restart zsh',
          'plat completion fish > ~/.config/fish/completions/plat.fish',
        ) +
          `

In zsh, source <(plat completion zsh) in ~/.zshrc (after compinit) works too; the same scripts ship in completions/.
They complete commands, help topics, options and their values: scope names (from the platform's cached metadata,
else the catalogue the platform documents), HTTP methods, profile names, base URLs your profiles remember, API
paths and operationIds (from the cached /openapi.json: run plat op once), after plat op <operationId> that
operation's --<parameter> flags and the values their enums allow, and file names for --input. Dynamic values come
from plat __complete <kind>, which reads only local files (profiles and the cache): a Tab press never touches the
network, and never offers a value with characters that mean something to the shell. --profile and --base-url typed
earlier on the line choose whose scopes and paths are offered.`,
      )
      .action(async (shell: string, _flags, command: Command) => {
        const { printScript } = await import('./completion.js');
        the.defineAll();
        printScript(the.contextFor(command), command.parent ?? program, shell);
      }),
  );
}

/** plat __complete <kind> [words...], hidden: what the completion scripts ask; the run is ./completion.ts. */
export function defineComplete(program: Command, the: Definitions): void {
  the.lazily(program.command('__complete', { hidden: true }).description('print completion candidates (used by the completion scripts)'), (cmd) =>
    cmd
      .argument('<kind>')
      .argument('[words...]', 'for op-flags and op-values: the operationId, then the parameter')
      .action(async (kind: string, words: string[], _flags, command: Command) => {
        const { printCandidates } = await import('./completion.js');
        await printCandidates(() => the.contextFor(command), kind, words);
      }),
  );
}
