import { type Command } from 'commander';
import { examples, type Definitions } from '../definition.js';

/** plat refresh; the run is ./refresh.ts. */
export function defineRefresh(program: Command, the: Definitions): void {
  the.lazily(program.command('refresh').description('refresh the access token now and store the rotated refresh token'), (cmd) =>
    cmd
      .addHelpText('after', examples('plat refresh', 'plat refresh --json | jq -r .expiresAt'))
      .action(async (_flags, command: Command) => {
        const { run } = await import('./refresh.js');
        await run(the.contextFor(command));
      }),
  );
}
