import { Argument, type Command } from 'commander';
import { completes } from '../completion/value-kinds.js';
import { examples, type Definitions } from './definition.js';
import { topicList } from '../help/topics.js';

/** plat help [command|topic]; the run is ./help.ts. */
export function defineHelp(program: Command, _the: Definitions): void {
  // `plat help [command|topic]`: a command's help, or a topic of the reference (src/help/topics/, as gh's help topics).
  program.helpCommand(false);
  program
    .command('help')
    .description('show help for a command, or a topic of the reference (the same text as man plat)')
    .addArgument(completes(new Argument('[command|topic]', 'a command, or one of the help topics below'), 'commands'))
    .addHelpText('after', `${examples('plat help login', 'plat help sign-in', 'plat help exit-codes')}\n\nHelp topics:\n${topicList()}`)
    .action(async (name: string | undefined) => {
      const { runHelp } = await import('./help.js');
      runHelp(program, name);
    });
}
