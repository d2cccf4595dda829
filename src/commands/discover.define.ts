import { type Command } from 'commander';
import { examples, type Definitions } from './definition.js';

/** plat discover; the run is ./discover.ts. */
export function defineDiscover(program: Command, the: Definitions): void {
  the.lazily(program.command('discover').description('show what the platform publishes: endpoints, grant types, PKCE methods, registration, resource'), (cmd) =>
    cmd
      .option('--refresh', 'fetch the metadata again instead of using the cached copy (kept for an hour)')
      .addHelpText(
        'after',
        examples('plat discover --base-url https://school.example.com', 'plat discover --json | jq .endpoints', 'plat discover --refresh'),
      )
      .action(async (flags, command: Command) => {
        const { run } = await import('./discover.js');
        await run(the.contextFor(command), flags);
      }),
  );
}
