import { Argument, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { examples, type Definitions } from '../definition.js';

/** plat switch <profile>; the run is ./switch.ts. */
export function defineSwitch(program: Command, the: Definitions): void {
  the.lazily(program.command('switch').description('make a profile the current one (kept in the config dir); --profile and PLAT_PROFILE still win'), (cmd) =>
    cmd
      .addArgument(completes(new Argument('<profile>', 'the profile to use from now on'), 'profiles'))
      .addHelpText('after', examples('plat switch school', 'plat switch default', 'plat status'))
      .action(async (name: string, _flags, command: Command) => {
        const { run } = await import('./switch.js');
        await run(the.contextFor(command), name);
      }),
  );
}
