/**
 * The commander program: global options, one factory per command, and each command's module imported only when
 * that command runs (so `plat --version` loads nothing but this file).
 */
import { Command, Option } from 'commander';
import type { Context, Globals } from './context.js';

export type ContextFactory = (globals: Globals) => Context;

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function buildProgram(version: string, makeContext: ContextFactory): Command {
  const program = new Command('plat')
    .description('Sign in to the learning platform API with OAuth 2.0 / OpenID Connect, then call it.')
    .version(version, '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--base-url <url>', 'origin of the platform API (env: PLAT_BASE_URL; remembered by the profile at login)')
    .option('--profile <name>', 'which stored session to use (env: PLAT_PROFILE)')
    .option('--json', 'machine-readable output on stdout')
    .option('--verbose', 'HTTP trace on stderr, secrets redacted (env: PLAT_DEBUG=1)')
    .option('--no-color', 'never colour output (also NO_COLOR)')
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      `
The journey:
  $ plat login --base-url https://school.example.com --scope courses:read
  $ plat whoami
  $ plat call GET /api/courses | jq .
  $ plat logout

Exit codes: 0 ok, 1 failure, 2 usage, 3 network, 4 authentication, 5 insufficient scope, 130 interrupted.`,
    );

  const ctxFor = (command: Command) => {
    const o = command.optsWithGlobals() as Record<string, unknown>;
    return makeContext({
      baseUrl: o.baseUrl as string | undefined,
      profile: (o.profile as string | undefined) ?? '',
      json: Boolean(o.json),
      verbose: Boolean(o.verbose),
    });
  };

  program
    .command('login')
    .description('sign in: discover the server, register plat, approve in the browser, store the tokens')
    .option('--scope <scope>', 'scope to request; repeat, or separate with spaces or commas (default: openid profile email)', collect)
    .option('--add-scope <scope>', 'keep the scopes already granted and add these (step-up)', collect)
    .option('--no-browser', 'do not open a browser; print the address only')
    .option('--port <n>', 'port of the local callback listener on 127.0.0.1 (default: a free one)')
    .option('--resource <uri>', 'resource indicator (RFC 8707) to bind the tokens to')
    .option('--client-id <id>', 'use a pre-registered client instead of registering one')
    .option('--client-secret-stdin', 'read the pre-registered client\'s secret from the first line of stdin')
    .option('--timeout <seconds>', 'how long to wait for approval in the browser', '300')
    .addHelpText('after', `
Examples:
  $ plat login --base-url https://school.example.com --scope courses:read
  $ plat login --add-scope students:read
  $ plat login --no-browser --port 8765      # browser elsewhere: forward the port or paste the final URL`)
    .action(async (flags, command: Command) => {
      const { run } = await import('./commands/login.js');
      await run(ctxFor(command), flags);
    });

  program
    .command('whoami')
    .description('show who you are signed in as (OIDC UserInfo)')
    .addHelpText('after', `
Examples:
  $ plat whoami
  $ plat whoami --json | jq -r .email`)
    .action(async (_flags, command: Command) => {
      const { run } = await import('./commands/whoami.js');
      await run(ctxFor(command));
    });

  program
    .command('call')
    .description('call the API with your token; the response body goes to stdout')
    .argument('<method>', 'HTTP method: GET, POST, PUT, PATCH, DELETE, …')
    .argument('<path>', 'path relative to the base URL (/api/courses), or an absolute URL')
    .option('-H, --header <header>', 'add a request header "Name: value" (repeatable)', collect)
    .option('-f, --field <key=value>', 'add a string field (repeatable): query on GET/HEAD/DELETE, JSON body otherwise', collect)
    .option('-F, --typed-field <key=value>', 'add a typed field: numbers, true/false/null, @file (repeatable)', collect)
    .option('--input <file>', 'send a file (or - for stdin) as the request body')
    .option('-i, --include', 'print the status line and response headers first')
    .option('--anonymous', 'send no token')
    .option('--timeout <seconds>', 'give up after this many seconds')
    .addHelpText('after', `
Examples:
  $ plat call GET /api/courses | jq '.courses[].title'
  $ plat call POST /api/courses -f title=Algebra -F seats=30
  $ plat call PUT /api/pages/1 --input page.json`)
    .action(async (method: string, path: string, flags, command: Command) => {
      const { run } = await import('./commands/call.js');
      await run(ctxFor(command), method, path, flags);
    });

  program
    .command('token')
    .description('print the access token (refreshed if needed) and nothing else')
    .addHelpText('after', `
Examples:
  $ curl -H "Authorization: Bearer $(plat token)" https://school.example.com/api/courses`)
    .action(async (_flags, command: Command) => {
      const { run } = await import('./commands/token.js');
      await run(ctxFor(command));
    });

  program
    .command('status')
    .description('list profiles: platform, user, scopes, token expiry, where tokens are stored')
    .option('--check', 'also ask the server whether each token still works')
    .addHelpText('after', `
Examples:
  $ plat status
  $ plat status --json | jq '.profiles[] | {profile, loggedIn}'`)
    .action(async (flags, command: Command) => {
      const { run } = await import('./commands/status.js');
      await run(ctxFor(command), flags);
    });

  program
    .command('refresh')
    .description('refresh the access token now and store the rotated refresh token')
    .addHelpText('after', `
Examples:
  $ plat refresh --json | jq -r .expiresAt`)
    .action(async (_flags, command: Command) => {
      const { run } = await import('./commands/refresh.js');
      await run(ctxFor(command));
    });

  program
    .command('logout')
    .description('revoke the tokens at the server and forget them locally')
    .option('--no-revoke', 'only forget the tokens locally')
    .option('--all', 'log out of every profile')
    .addHelpText('after', `
Examples:
  $ plat logout
  $ plat logout --all`)
    .action(async (flags, command: Command) => {
      const { run } = await import('./commands/logout.js');
      await run(ctxFor(command), flags);
    });

  program.addOption(new Option('--debug').hideHelp());
  return program;
}
