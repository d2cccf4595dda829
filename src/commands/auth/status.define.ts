import { Argument, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { examples, type Definitions } from '../definition.js';

/** plat status [profile]; the run is ./status.ts. */
export function defineStatus(program: Command, the: Definitions): void {
  the.lazily(program.command('status').description('list profiles (or the one named): platform, user, scopes, token expiry, where tokens are stored; exit 4 if one is not logged in'), (cmd) =>
    cmd
      .addArgument(completes(new Argument('[profile]', 'show only this profile'), 'profiles'))
      .option('--check', 'also ask the server whether each token still works')
      .addHelpText(
        'after',
        examples('plat status', 'plat status school', 'plat status --check', "plat status --json | jq '.profiles[] | {profile, loggedIn}'"),
      )
      .action(async (name: string | undefined, flags, command: Command) => {
        const { run } = await import('./status.js');
        await run(the.contextFor(command), { ...flags, profile: name });
      }),
  );
}
