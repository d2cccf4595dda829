import { type Command } from 'commander';
import { examples, type Definitions } from '../definition.js';

/** plat logout; the run is ./logout.ts. */
export function defineLogout(program: Command, the: Definitions): void {
  the.lazily(program.command('logout').description('revoke the tokens at the server and forget them locally'), (cmd) =>
    cmd
      .option('--no-revoke', 'only forget the tokens locally')
      .option('--all', 'log out of every profile')
      .option('--forget', 'also delete the profile: its platform, client registration and user')
      .addHelpText('after', examples('plat logout', 'plat logout --all', 'plat logout --profile staging --json', 'plat logout --profile old-school --forget'))
      .action(async (flags, command: Command) => {
        const { run } = await import('./logout.js');
        await run(the.contextFor(command), flags);
      }),
  );
}
