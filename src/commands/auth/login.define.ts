import { Option, type Command } from 'commander';
import { collect, completes } from '../../completion/value-kinds.js';
import { examples, forOperations, type Definitions } from '../definition.js';

/** plat login: its options, help and examples; the run is ./login.ts. */
export function defineLogin(program: Command, the: Definitions): void {
  the.lazily(program.command('login').description('sign in: discover the server, register plat, approve in the browser, store the tokens'), (cmd) =>
    cmd
      .addOption(
        completes(
          new Option('--scope <scope>', 'scope to request (plat adds openid profile email where the server offers them); repeat, or separate with spaces or commas').argParser(collect),
          'scopes',
        ),
      )
      .addOption(completes(new Option('--add-scope <scope>', 'keep the scopes already granted and add these (step-up)').argParser(collect), 'scopes'))
      .option('--device', 'sign in with a code on any device (RFC 8628 device flow), where the server offers it')
      .option('--no-browser', 'do not open a browser; print the address only')
      .option('--port <n>', 'port of the local callback listener on 127.0.0.1 (default: a free one)')
      .option('--resource <uri>', 'resource indicator (RFC 8707) to bind the tokens to')
      .option('--resource-metadata <url>', "address of the API's protected-resource metadata (RFC 9728), where no well-known address has it")
      .option('--client-id <id>', 'use a pre-registered client instead of registering one')
      .option('--client-secret-stdin', 'read the pre-registered client\'s secret from the first line of stdin')
      .option('--client-metadata-url <url>', 'use the https URL of your client ID metadata document as the client_id (servers that support it)')
      .option('--timeout <seconds>', 'how long to wait for approval in the browser (default: 300)')
      .option('--no-dpop', 'ask for bearer tokens even where the server offers DPoP-bound ones (RFC 9449)')
      .addOption(forOperations('ask for exactly the scopes these operations need (plat scopes plan)'))
      .addHelpText(
        'after',
        examples(
          'plat login --base-url https://school.example.com --scope courses:read',
          'plat login --add-scope students:read               # step-up: add to what you have',
          'plat login --for listEnrolments --for getSchoolReport   # least privilege',
          'plat login --no-browser --port 8765                # browser elsewhere: paste the URL',
          'plat login --device                                # over SSH: enter a code on any device',
          'plat login --resource-metadata https://api.example.com/mcp-meta.json',
          'plat login --client-id my-app --client-secret-stdin < secret.txt',
          'plat login --json | jq -r .expiresAt',
        ) + '\n\nSigning in beyond one desktop (SSH, containers, device codes, step-up,\nintegrations, several accounts):\nplat help sign-in.',
      )
      .action(async (flags, command: Command) => {
        const { run } = await import('./login.js');
        await run(the.contextFor(command), flags);
      }),
  );
}
