import { type Command } from 'commander';
import { examples, type Definitions } from '../definition.js';

/** plat token (also a plain form, src/dispatch.ts); the run is ./token.ts. */
export function defineToken(program: Command, the: Definitions): void {
  the.lazily(program.command('token').description('print the access token (refreshed if needed) and nothing else'), (cmd) =>
    cmd
      .option('--min-ttl <seconds>', 'refresh first if the token would expire sooner; exit 4 if the server cannot give one that lasts')
      .option('--dpop-bound', 'on a DPoP-bound session: print the token anyway, for a program that sends it with proofs (--dpop-proof)')
      .option('--dpop-proof <"METHOD URL">', "on a DPoP-bound session: print a fresh DPoP proof for one request to the platform (--json: with the token and the key's thumbprint)")
      .option('--dpop-nonce <nonce>', 'the DPoP-Nonce the server gave, for --dpop-proof')
      .addHelpText(
        'after',
        examples(
          'curl --oauth2-bearer "$(plat token)" https://school.example.com/api/courses',
          'plat token --json | jq -r .expires_at',
          'plat token --min-ttl 900                          # a token that lasts at least 15 minutes',
        ),
      )
      .action(async (flags, command: Command) => {
        const { run } = await import('./token.js');
        await run(the.contextFor(command), flags);
      }),
  );
}
