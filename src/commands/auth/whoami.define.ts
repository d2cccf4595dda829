import { type Command } from 'commander';
import { examples, type Definitions } from '../definition.js';

/** plat whoami (also a plain form, src/dispatch.ts); the run is ./whoami.ts. */
export function defineWhoami(program: Command, the: Definitions): void {
  the.lazily(program.command('whoami').description('show who you are signed in as (OIDC UserInfo)'), (cmd) =>
    cmd
      .addHelpText('after', examples('plat whoami', 'plat whoami --json | jq -r .email'))
      .action(async (_flags, command: Command) => {
        const { run } = await import('./whoami.js');
        await run(the.contextFor(command));
      }),
  );
}
