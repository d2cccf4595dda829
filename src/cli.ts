/**
 * The commander program: global options, one factory per command, and each command's module imported only when
 * that command runs (so `plat --version` loads nothing but this file).
 *
 * This definition is also the single source of the shell completions (`plat completion <shell>`) and the man
 * page: what an option's value can be is recorded here with `completes()`, next to the option itself.
 */
import { Argument, Command, Help, Option, type AddHelpTextContext, type AddHelpTextPosition, type OutputConfiguration } from 'commander';
import { callOptions, opOptions } from './commands/call/options.js';
import { collect, completes } from './completion/value-kinds.js';
import type { Context, Globals } from './context.js';
import { runCall, runToken, runWhoami } from './dispatch.js';
import { fitHelp, formatHelpItem } from './help/fit.js';
import { topicList } from './help/topics.js';

export type ContextFactory = (globals: Globals) => Context;

const SHELLS = ['bash', 'zsh', 'fish'] as const;

/**
 * A Command whose added help text (examples, notes) is fitted to the terminal's width when it is shown, as the
 * help commander formats is (configureHelp below); every command is made by it (commander's createCommand).
 */
class FittedCommand extends Command {
  override createCommand(name?: string): Command {
    return new FittedCommand(name);
  }

  override addHelpText(position: AddHelpTextPosition, text: string | ((context: AddHelpTextContext) => string)): this {
    return super.addHelpText(position, (context) => {
      const output = this.configureOutput();
      const width = (context.error ? output.getErrHelpWidth : output.getOutHelpWidth)?.() ?? 80;
      return fitHelp(typeof text === 'function' ? text(context) : text, width);
    });
  }
}

/**
 * commander's errors, with a pointer where a habit from another tool misled: kubectl's and gcloud's `-o json` (or
 * --output) is plat's --json. Still a usage error (exit 2), in commander's words with the way to say it in plat's.
 */
function withHints(output: OutputConfiguration): OutputConfiguration {
  const write = output.outputError ?? ((message: string, to: (text: string) => void) => to(message));
  return {
    ...output,
    outputError: (message, to) => {
      const flag = /^error: unknown option '(-o\S*|--output(?:=\S*)?)'/.exec(message)?.[1];
      if (flag === undefined) return write(message, to);
      write(`error: unknown option '${flag}': for machine-readable output, plat takes --json (as in plat status --json).\n`, to);
    },
  };
}

/** --for <operationId>, as login and mcp take it: operations named, repeated or in one list, completed from plat op. */
function forOperations(what: string): Option {
  return completes(new Option('--for <operationId>', `${what}; repeat, or separate with spaces or commas`).argParser(collect), 'operations');
}

/**
 * Help text with examples, one `$ plat …` line each; a trailing `# …` (after two spaces) explains the line. Examples
 * stay within 80 columns, to be copied whole: the comments are aligned at a column that lets them fit, and one that
 * cannot fit beside its command goes on the line below (completion/model.ts joins it back for the man page).
 */
function examples(...lines: string[]): string {
  const WIDTH = 80;
  const parsed = lines.map((line) => {
    const match = /^(.*?)\s{2,}# (.*)$/.exec(line);
    return match ? { command: match[1]!, comment: match[2]! } : { command: line, comment: undefined };
  });
  const start = (command: string) => '  $ '.length + command.length + 2;
  const fitsAt = (column: number, comment: string) => column + '# '.length + comment.length <= WIDTH;
  const column = Math.max(0, ...parsed.filter((p) => p.comment !== undefined && fitsAt(start(p.command), p.comment)).map((p) => start(p.command)));
  const shown = parsed.map(({ command, comment }) => {
    const line = `  $ ${command}`;
    if (comment === undefined) return line;
    if (start(command) <= column && fitsAt(column, comment)) return `${line.padEnd(column)}# ${comment}`;
    if (fitsAt(start(command), comment)) return `${line}  # ${comment}`;
    return `${line}\n      # ${comment}`;
  });
  return `\nExamples:\n${shown.join('\n')}`;
}

/** How agent hosts start `plat mcp` (also in `plat help agents`, src/help/topics/agents.md). */
const MCP_HOSTS = `Agent hosts start plat mcp themselves and talk to it over stdin/stdout. Sign in (plat login) before or while
it runs: the server never opens a browser or signs in, and a tool that needs a session or a scope it lacks names the
plat login command to run. Configure the host (add "--profile", "<name>" and "--allow-write" to args as needed;
plat help agents shows the "env" entry for a keychain the host's minimal environment does not reach):

  Claude Code:     claude mcp add plat -- plat mcp
  Codex CLI:       codex mcp add plat -- plat mcp
  Claude Desktop (claude_desktop_config.json), Cursor (~/.cursor/mcp.json), Windsurf, Cline:
    { "mcpServers": { "plat": { "command": "plat", "args": ["mcp"] } } }
  VS Code (.vscode/mcp.json):
    { "servers": { "plat": { "type": "stdio",
                             "command": "plat", "args": ["mcp"] } } }

Tools: one per operation of the platform's /openapi.json (reading ones only unless --allow-write), plus call (any
path on the platform's origin, nowhere else) and whoami; with --for exactly the operations named (whoami only when
named, never call). Results are capped at 256 KiB; lists page up to 20 pages.`;

export interface BuildOptions {
  /**
   * Each command's options, arguments, help text and action are added when it is dispatched, or when the whole
   * program is described (root help, completions): defining all of them costs ~0.7 ms of every start, and a run
   * dispatches one (main.ts). Without it (the default) the program is whole at once, for what reads it entire.
   */
  lazy?: boolean;
  /** Where commander writes help and its errors (main.ts: plat's io); set before the commands, which inherit it. */
  output?: OutputConfiguration;
}

export function buildProgram(version: string, makeContext: ContextFactory, options: BuildOptions = {}): Command {
  /**
   * Options a command shows but leaves to commands it makes itself: plat op's, which the command made for the
   * operation named parses (commands/op/command.ts). Its help and the completions (completion/model.ts) read them
   * through commander's Help, below.
   */
  const shownOptions = new WeakMap<Command, readonly Option[]>();
  const program: Command = new FittedCommand('plat')
    .description('Sign in to the learning platform API with OAuth 2.0 / OpenID Connect, then call it.')
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      // A command defined lazily is defined before its help is written; the root help lists every command's
      // arguments and whether it has options, so it needs them all.
      formatHelp(command, helper): string {
        if (command === program) defineAll();
        else define(command);
        return fitHelp(Help.prototype.formatHelp.call(helper, command, helper), helper.helpWidth ?? 80);
      },
      // commander stops wrapping when the term column leaves the descriptions under 40 columns: capped instead.
      formatItem(term, termWidth, description, helper): string {
        return formatHelpItem(term, termWidth, description, helper.helpWidth ?? 80);
      },
      visibleOptions(command) {
        return shownOptions.get(command)?.slice() ?? Help.prototype.visibleOptions.call(this, command);
      },
      subcommandTerm(command) {
        const term = Help.prototype.subcommandTerm.call(this, command);
        return shownOptions.has(command) ? `${command.name()} [options]${term.slice(command.name().length)}` : term;
      },
    })
    // Errors and help end in an exception main.ts maps to an exit code: it is the one place plat exits.
    .exitOverride()
    .configureOutput(withHints(options.output ?? {}))
    .showSuggestionAfterError(true)
    .version(version, '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addOption(completes(new Option('--base-url <url>', 'origin of the platform API (env: PLAT_BASE_URL; remembered by the profile at login)'), 'base-urls'))
    .addOption(completes(new Option('--profile <name>', 'which stored session to use (env: PLAT_PROFILE; default: default)'), 'profiles'))
    .option('--json', 'machine-readable output on stdout')
    .option('--verbose', 'HTTP trace on stderr, secrets redacted (env: PLAT_DEBUG=1)')
    .option('--no-color', 'never colour output (also NO_COLOR; FORCE_COLOR forces it)')
    .option('--no-prompt', 'never ask a question, e.g. to step up on a missing scope (env: PLAT_NO_PROMPT=1)')
    .addHelpText(
      'after',
      `
Help topics (plat help <topic>; all of them are in man plat):
${topicList()}

The journey:
  $ plat login --base-url https://school.example.com --scope courses:read
  $ plat whoami
  $ plat call GET /api/courses | jq .
  $ plat logout

Find your way around a platform:
  $ plat discover --base-url https://school.example.com
  $ plat scopes
  $ plat op courses
  $ plat scopes plan listEnrolments

Run plat <command> --help for a command's options and examples.
Exit codes: 0 ok, 1 failure, 2 usage, 3 network, 4 authentication,
5 insufficient scope, 130 interrupted.`,
    );

  program.hook('preSubcommand', (_program, command) => define(command));

  /** Definitions not made yet (BuildOptions.lazy): made at dispatch, or when help is written (formatHelp above). */
  const definitions = new Map<Command, () => void>();
  const lazily = (command: Command, definition: (command: Command) => unknown): Command => {
    if (options.lazy) definitions.set(command, () => definition(command));
    else definition(command);
    return command;
  };
  const define = (command: Command) => {
    const definition = definitions.get(command);
    definitions.delete(command);
    definition?.();
  };
  const defineAll = () => {
    for (const command of [...definitions.keys()]) define(command);
  };

  const ctxFor = (command: Command) => {
    const o = command.optsWithGlobals() as Record<string, unknown>;
    return makeContext({
      baseUrl: o.baseUrl as string | undefined,
      profile: (o.profile as string | undefined) ?? '',
      json: Boolean(o.json),
      verbose: Boolean(o.verbose),
    });
  };

  program.commandsGroup('Session:');

  lazily(program.command('login').description('sign in: discover the server, register plat, approve in the browser, store the tokens'), (cmd) =>
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
        const { run } = await import('./commands/auth/login.js');
        await run(ctxFor(command), flags);
      }),
  );

  lazily(program.command('whoami').description('show who you are signed in as (OIDC UserInfo)'), (cmd) =>
    cmd
      .addHelpText('after', examples('plat whoami', 'plat whoami --json | jq -r .email'))
      .action((_flags, command: Command) => runWhoami(() => ctxFor(command))),
  );

  lazily(program.command('status').description('list profiles (or the one named): platform, user, scopes, token expiry, where tokens are stored; exit 4 if one is not logged in'), (cmd) =>
    cmd
      .addArgument(completes(new Argument('[profile]', 'show only this profile'), 'profiles'))
      .option('--check', 'also ask the server whether each token still works')
      .addHelpText(
        'after',
        examples('plat status', 'plat status school', 'plat status --check', "plat status --json | jq '.profiles[] | {profile, loggedIn}'"),
      )
      .action(async (name: string | undefined, flags, command: Command) => {
        const { run } = await import('./commands/auth/status.js');
        await run(ctxFor(command), { ...flags, profile: name });
      }),
  );

  lazily(program.command('switch').description('make a profile the current one (kept in the config dir); --profile and PLAT_PROFILE still win'), (cmd) =>
    cmd
      .addArgument(completes(new Argument('<profile>', 'the profile to use from now on'), 'profiles'))
      .addHelpText('after', examples('plat switch school', 'plat switch default', 'plat status'))
      .action(async (name: string, _flags, command: Command) => {
        const { run } = await import('./commands/auth/switch.js');
        await run(ctxFor(command), name);
      }),
  );

  lazily(program.command('refresh').description('refresh the access token now and store the rotated refresh token'), (cmd) =>
    cmd
      .addHelpText('after', examples('plat refresh', 'plat refresh --json | jq -r .expiresAt'))
      .action(async (_flags, command: Command) => {
        const { run } = await import('./commands/auth/refresh.js');
        await run(ctxFor(command));
      }),
  );

  lazily(program.command('token').description('print the access token (refreshed if needed) and nothing else'), (cmd) =>
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
      .action((flags, command: Command) => runToken(() => ctxFor(command), flags)),
  );

  lazily(program.command('exec').description('run a program with a fresh token in its environment (PLAT_TOKEN, PLAT_BASE_URL)'), (cmd) =>
    cmd
      .addArgument(completes(new Argument('<command...>', 'the program and its arguments, after --'), 'command-line'))
      .usage('[--env NAME] [--min-ttl <seconds>] [--proxy] -- <command> [args...]')
      .option('--env <name>', 'the environment variable that carries the token', 'PLAT_TOKEN')
      .option('--proxy', 'give the program no token: a plat proxy for its lifetime, in PLAT_PROXY_URL and PLAT_BASE_URL')
      .option('--min-ttl <seconds>', 'refresh first if the token would expire sooner, as plat token does; exit 4 if the server cannot give one that lasts')
      // `plat exec curl -s …` without the `--`: commander takes -s for plat's; say how to hand it to the command.
      .showHelpAfterError('(the command and its options go after --: plat exec -- <command> [args...])')
      .addHelpText(
        'after',
        examples(
          'plat exec -- ./sync.sh  # it reads $PLAT_TOKEN and $PLAT_BASE_URL',
          'plat exec -- python3 migrate.py                 # os.environ["PLAT_TOKEN"]',
          'plat exec --env API_TOKEN -- node sync.mjs      # process.env.API_TOKEN',
          'plat exec --min-ttl 900 -- ./job                # a token that lasts the job\'s 15 minutes',
          'plat exec --proxy -- sh -c \'curl -sf "${PLAT_PROXY_URL}api/courses"\'',
        ) +
          `

The token is never on the program's command line. plat exits with the program's status (128 + n when signal n
ended it) and passes SIGINT, SIGTERM and SIGHUP on to it.`,
      )
      .action(async (argv: string[], flags, command: Command) => {
        const { run } = await import('./commands/exec.js');
        await run(ctxFor(command), argv, flags);
      }),
  );

  lazily(program.command('logout').description('revoke the tokens at the server and forget them locally'), (cmd) =>
    cmd
      .option('--no-revoke', 'only forget the tokens locally')
      .option('--all', 'log out of every profile')
      .option('--forget', 'also delete the profile: its platform, client registration and user')
      .addHelpText('after', examples('plat logout', 'plat logout --all', 'plat logout --profile staging --json', 'plat logout --profile old-school --forget'))
      .action(async (flags, command: Command) => {
        const { run } = await import('./commands/auth/logout.js');
        await run(ctxFor(command), flags);
      }),
  );

  program.commandsGroup('The API:');

  lazily(program.command('call').description('call the API with your token; the response body goes to stdout'), (cmd) => {
    cmd
      .addArgument(completes(new Argument('<method>', 'HTTP method: GET, POST, PUT, PATCH, DELETE, …'), 'methods'))
      // Optional to commander so that a path typed without its method gets plat's own hint (commands/call/usage.ts).
      .addArgument(completes(new Argument('[path]', 'path relative to the base URL (/api/courses), or an absolute URL'), 'paths'))
      .usage('[options] <method> <path>');
    for (const option of callOptions()) cmd.addOption(option);
    cmd
      .addHelpText(
        'after',
        examples(
          "plat call GET /api/courses | jq '.courses[].title'",
          'plat call GET /api/courses -f q=algebra -F limit=5     # query parameters',
          'plat call POST /api/courses -f title=Algebra -F seats=30',
          'plat call PUT /api/pages/1 --input page.json',
          "plat call GET /api/courses -i -H 'Accept-Language: de'",
          'plat call GET /api/courses --jq \'.courses[].title\'       # strings print raw',
          'plat call GET /api/courses --paginate > all.json  # every page, one array',
          "plat call GET /api/courses --paginate --ndjson --jq 'select(.public) | .id'",
          'plat call GET /api/courses --paginate --max-items 50 --slurp',
          'plat call GET /reports --paginate --items rows --next paging.after=after',
        ) +
          `

Paths and scopes come from the platform's /openapi.json once plat op has cached it: plat call warns about a path
the document does not list, and names the scope an operation needs when the session lacks it.

--paginate finds the next page in this order: an RFC 8288 Link header with rel="next"; a body member next,
next_url, next_page_url, links.next (or links.next.href), @odata.nextLink, next_cursor, meta.next_cursor,
meta.cursor, response_metadata.next_cursor or cursor (a URL is followed; any other value is sent back as ?cursor=);
page with total_pages (top level or under meta), as ?page=N+1. The items are the body when it is an array, else
its only array member, or the first of items, data, results, value, records, entries, elements. A page that says
has_more but names no next page is an error, not a short list. A next link on
another origin is fetched without your token; a page that leads back to an earlier one is an error. If a page
fails, plat exits non-zero and the array printed so far has no closing ].

--jq with --paginate filters one array holding every page's items, not each page as gh api --paginate --jq does:
write --jq '.[].title' where gh takes '.items[].title' (--slurp: an array of the whole pages; --ndjson: each item).`,
      )
      // gh api's spellings, accepted only to be answered with plat call's own.
      .addOption(new Option('-X <method>').hideHelp())
      .addOption(new Option('-q <expr>').hideHelp())
      .action(async (method: string, path: string | undefined, flags, command: Command) => {
        if (path === undefined || flags.X !== undefined || flags.q !== undefined) {
          const { callUsageError } = await import('./commands/call/usage.js');
          const error = callUsageError(ctxFor(command), method, path, flags);
          if (error) throw error;
        }
        await runCall(() => ctxFor(command), method, path!, flags);
      });
  });

  lazily(program.command('api').description('gh api\'s shape: call a path (GET, or POST with fields) with your token; the response body goes to stdout'), (cmd) => {
    cmd
      .addArgument(completes(new Argument('<path>', 'path relative to the base URL (/api/courses), or an absolute URL'), 'paths'))
      .addOption(completes(new Option('-X, --method <method>', 'the HTTP method (default: GET, or POST when -f/-F/--input give a body)'), 'methods'))
      .addOption(new Option('-q, --jq <expr>', 'filter the JSON response with jq (with --paginate: the merged items, not each page as gh does)'))
      .addOption(new Option('--silent', 'do not print the response body (the exit code still says how it went; -i still prints the head)'));
    // The rest of plat call's options: the same runner behind both shapes.
    for (const option of callOptions()) if (option.long !== '--jq') cmd.addOption(option);
    cmd
      .addHelpText(
        'after',
        examples(
          "plat api /api/courses | jq '.courses[].title'              # GET, as gh api",
          'plat api /api/courses -f title=Algebra -F seats=30         # POST, a JSON body',
          'plat api -X GET /api/courses -f q=algebra                  # fields as query parameters',
          "plat api /api/courses -q '.courses[].title'",
          "plat api /api/lists/link --paginate -q '.[].title'          # all pages' items",
          'plat api -X PUT /api/pages/1 --input page.json -i',
          'plat api -X DELETE /api/courses/c1 --silent && echo deleted',
        ) +
          `

plat api and plat call run the same request: plat call GET /api/courses is plat api /api/courses. Unlike gh api,
--jq with --paginate filters the merged array of every page's items, not each page: write '.[]' where gh takes
'.items[]'. The operations are listed by plat op.`,
      )
      .action(async (path: string, flags, command: Command) => {
        const { run } = await import('./commands/call/api.js');
        await run(ctxFor(command), path, flags);
      });
  });

  lazily(program.command('op').description("list the API's operations from its /openapi.json, or call one by its operationId with checked parameters"), (cmd) => {
    cmd
      .usage('[filter] | <operationId> [--<parameter> <value>]... [-f/-F fields] [--input file] [call options]')
      .addArgument(completes(new Argument('[operationId]', 'the operation to call; anything else filters the list (method, path, summary, id, scopes)'), 'operations'))
      .addArgument(
        completes(new Argument('[parameters...]', "the operation's parameters: --<name> <value> each (plat op <operationId> --help lists them)"), 'operation-parameters'),
      )
      // Which words are plat's options and which the operation's parameters depends on the operation named: they
      // reach the action as typed, --help among them, and commands/op/command.ts parses them with a Command made
      // for that operation. The options it takes there are shown here, in the help and the completions.
      .helpOption(false)
      .allowUnknownOption()
      .addHelpText(
        'after',
        examples(
          'plat op                                             # every operation: id, method, path, summary, scopes',
          'plat op courses                                     # those whose id, path, summary or scopes mention courses',
          'plat op getCourse --help                            # parameters, body fields, scopes, an example',
          'plat op getCourse --courseId course-101 --include lessons',
          'plat op updateCourse --courseId course-101 -F seats=40 -f level=advanced',
          'plat op createCourse --input course.json -i',
          "plat op listCoursesLinkHeader --paginate --jq '.[].title'   # every page",
          'plat op --refresh                                   # read /openapi.json again now',
        ) +
          `

plat op checks required parameters, types, enums and the request body against the document before anything is
sent (exit 2, naming the parameter), then behaves as plat call: the same output, flags and exit codes. A long name
the operation uses for a parameter is the parameter (--include): reach plat's option by its short form (-i), and a
parameter named like a global option (--profile) with -p profile=value. The document is cached for an hour in the
config dir (ETag revalidation after that); a document that cannot be read never replaces the cached copy.`,
      )
      .action(async (_operationId: string | undefined, _parameters: string[], _flags, command: Command) => {
        const { run } = await import('./commands/op/op.js');
        await run(ctxFor(command), command, command.args);
      });
    shownOptions.set(cmd, [...opOptions(), new Option('-h, --help', 'show help')]);
  });

  lazily(program.command('scopes').description('list the scopes the platform offers and which your session holds; plan the least set some operations need'), (cmd) =>
    cmd
      .usage('[plan <operationId>...]')
      .addArgument(new Argument('[plan]', 'plan: the least set of scopes covering the operations named after it'))
      .addArgument(completes(new Argument('[operationIds...]', 'operations from plat op'), 'operations'))
      .addHelpText(
        'after',
        examples(
          'plat scopes',
          'plat scopes --base-url https://school.example.com',
          "plat scopes --json | jq -r '.scopes[] | select(.granted) | .name'",
          'plat scopes plan listEnrolments getSchoolReport      # least set, held or not',
          'plat login --for listEnrolments --for getSchoolReport  # ask for that set',
        ),
      )
      .action(async (plan: string | undefined, operationIds: string[], _flags, command: Command) => {
        if (plan !== undefined && plan !== 'plan') {
          const { unknownSubcommand } = await import('./commands/scopes/plan.js');
          throw unknownSubcommand(plan);
        }
        if (plan === 'plan') {
          const { runPlan } = await import('./commands/scopes/plan.js');
          await runPlan(ctxFor(command), operationIds);
          return;
        }
        const { run } = await import('./commands/scopes/scopes.js');
        await run(ctxFor(command));
      }),
  );

  lazily(program.command('batch').description('send many requests from NDJSON lines: parallel over one session, paced, resumable with a journal'), (cmd) =>
    cmd
      .addArgument(completes(new Argument('[file]', 'NDJSON requests, one a line (- or none: stdin)'), 'files'))
      .option('--concurrency <n>', 'requests in flight at once (default: 4)')
      .option('--rate <r/s>', 'at most this many requests a second, e.g. 20/s')
      .addOption(completes(new Option('--journal <file>', "record each line's outcome; a rerun with the same journal skips what is done and sends what failed"), 'files'))
      .option('--idempotency-key', 'send a stable Idempotency-Key per line (kept in the journal), so a line in flight when a run died can be sent again')
      .option('--resend-unknown', 'send again the lines the journal holds as unknown (you checked: they did not happen)')
      .addOption(new Option('--settle-unknown <outcome>', 'record the unknown lines as done or failed without sending them (you checked)').choices(['done', 'failed']))
      .addOption(completes(new Option('--failed <file>', 'write the lines that failed or are unknown to this file, as NDJSON to fix and rerun'), 'files'))
      .option('--ordered', 'print results in input order (default: as they complete)')
      .option('--fail-fast', 'stop at the first failed line')
      .option('--check', 'check every line and stop; nothing is sent')
      .option('--strict', "refuse raw lines whose method and path the platform's API description does not list")
      .option('--jq <expr>', 'filter each result with jq')
      .addHelpText(
        'after',
        examples(
          'plat batch enrol.ndjson --concurrency 8 --journal enrol.journal',
          'plat batch enrol.ndjson --journal enrol.journal --failed fix.ndjson',
          'plat batch fix.ndjson --journal enrol.journal      # the fixed lines only',
          'plat batch enrol.ndjson --journal enrol.journal --resend-unknown',
          "jq -c '{op: \"enrolStudent\", body: .}' students.json | plat batch - --check",
          "plat batch orders.ndjson --jq 'select(.ok | not)'   # only the failures",
        ) +
          `

Each line is {"id"?, "method", "path", "query"?, "headers"?, "body"?} or {"id"?, "op", "params"?, "body"?} (checked
against the platform's /openapi.json as plat op checks). Every line is checked before anything is sent. Each
result is one line: {"id", "line", "status", "ok", "body" | "error"}. A 429 or 503 with Retry-After pauses every
worker. With --journal a rerun skips the lines done (whatever their text now) and sends the failed ones (fixed or
not); a line in flight when a run died is sent again only with its Idempotency-Key, or when you say so
(--resend-unknown, --settle-unknown). Exit 0 when every line succeeded, 1 when any failed or is unknown, 2 for bad
lines or a journal of another platform (nothing sent), 4 when the session ended, 130 on Ctrl-C.`,
      )
      .action(async (file: string | undefined, flags, command: Command) => {
        const { run } = await import('./commands/batch/batch.js');
        await run(ctxFor(command), file, flags);
      }),
  );

  lazily(program.command('discover').description('show what the platform publishes: endpoints, grant types, PKCE methods, registration, resource'), (cmd) =>
    cmd
      .option('--refresh', 'fetch the metadata again instead of using the cached copy (kept for an hour)')
      .addHelpText(
        'after',
        examples('plat discover --base-url https://school.example.com', 'plat discover --json | jq .endpoints', 'plat discover --refresh'),
      )
      .action(async (flags, command: Command) => {
        const { run } = await import('./commands/discover.js');
        await run(ctxFor(command), flags);
      }),
  );

  lazily(program.command('mcp').description('serve the API to AI agents: a Model Context Protocol server on stdin/stdout, as you and within your scopes'), (cmd) =>
    cmd
      .addOption(forOperations('offer exactly these operations as tools (whoami only if named, no call tool)'))
      .option('--allow-write', 'also offer operations that change data (POST, PUT, PATCH, DELETE); default: reading only')
      .addHelpText(
        'after',
        examples(
          'plat mcp                                            # the read operations, as the default profile',
          'plat mcp --profile school --for listCourses --for getCourse',
          'plat mcp --allow-write                              # also operations that change data',
        ) + `\n\n${MCP_HOSTS}`,
      )
      .action(async (flags, command: Command) => {
        const { loadMcpCommand } = await import('./mcp/load.js');
        const { run } = await loadMcpCommand();
        await run(ctxFor(command), flags);
      }),
  );

  lazily(program.command('proxy').description('serve the platform at a local address for any HTTP tool, with your token added (which the tool never sees)'), (cmd) =>
    cmd
      .usage('[--port <n> | --socket <path>] [--allow-write]')
      .option('--port <n>', 'the port on 127.0.0.1 (default 0: any free port)')
      .addOption(completes(new Option('--socket <path>', 'listen on a unix socket (made 0600) instead of TCP'), 'files'))
      .option('--allow-write', 'also forward methods that change data (POST, PUT, PATCH, DELETE); default: reading only')
      .addHelpText(
        'after',
        examples(
          'plat proxy              # PLAT_PROXY_URL=http://127.0.0.1:PORT/KEY/',
          'exec 3< <(plat proxy); read -r line <&3; eval "$line"',
          'curl -s "${PLAT_PROXY_URL}api/courses"',
          'plat proxy --socket ~/.plat.sock --allow-write',
          'plat exec --proxy -- python3 job.py   # PLAT_PROXY_URL, no token',
        ) +
          `

Requests to PLAT_PROXY_URL go to the platform with your session's token,
refreshed as every plat command refreshes it. Over TCP each request's path
starts with the key the URL holds (403 without it); a foreign Host, any Origin
header, a URL naming another host and CONNECT are refused. Ctrl-C ends it.
More: plat help scripting, plat help security.`,
      )
      .action(async (flags, command: Command) => {
        const { run } = await import('./commands/proxy.js');
        await run(ctxFor(command), flags);
      }),
  );

  program.commandsGroup('Shell:');

  lazily(program.command('completion').description('print the shell completion script for bash, zsh or fish'), (cmd) =>
    cmd
      .addArgument(new Argument('<shell>', 'the shell: bash, zsh or fish').choices(SHELLS))
      .addHelpText(
        'after',
        examples(
          'source <(plat completion bash)                               # in ~/.bashrc',
          'plat completion bash > ~/.local/share/bash-completion/completions/plat',
          'plat completion zsh > "${fpath[1]}/_plat"                     # then restart zsh',
          'plat completion fish > ~/.config/fish/completions/plat.fish',
        ) +
          `

In zsh, source <(plat completion zsh) in ~/.zshrc (after compinit) works too; the same scripts ship in completions/.
They complete commands, help topics, options and their values: scope names (from the platform's cached metadata,
else the catalogue the platform documents), HTTP methods, profile names, base URLs your profiles remember, API
paths and operationIds (from the cached /openapi.json: run plat op once), after plat op <operationId> that
operation's --<parameter> flags and the values their enums allow, and file names for --input. Dynamic values come
from plat __complete <kind>, which reads only local files (profiles and the cache): a Tab press never touches the
network, and never offers a value with characters that mean something to the shell. --profile and --base-url typed
earlier on the line choose whose scopes and paths are offered.`,
      )
      .action(async (shell: string, _flags, command: Command) => {
        const { printScript } = await import('./commands/completion.js');
        defineAll();
        printScript(ctxFor(command), command.parent ?? program, shell);
      }),
  );

  // gh version and kubectl version print the version: so does plat version, hidden (--version is the documented way).
  program
    .command('version', { hidden: true })
    .description('print the version (as plat --version)')
    .action((_flags, command: Command) => ctxFor(command).io.out(`${version}\n`));

  lazily(program.command('__complete', { hidden: true }).description('print completion candidates (used by the completion scripts)'), (cmd) =>
    cmd
      .argument('<kind>')
      .argument('[words...]', 'for op-flags and op-values: the operationId, then the parameter')
      .action(async (kind: string, words: string[], _flags, command: Command) => {
        const { printCandidates } = await import('./commands/completion.js');
        await printCandidates(() => ctxFor(command), kind, words);
      }),
  );

  // `plat help [command|topic]`: a command's help, or a topic of the reference (src/help/topics/, as gh's help topics).
  program.helpCommand(false);
  program
    .command('help')
    .description('show help for a command, or a topic of the reference (the same text as man plat)')
    .addArgument(completes(new Argument('[command|topic]', 'a command, or one of the help topics below'), 'commands'))
    .addHelpText('after', `${examples('plat help login', 'plat help sign-in', 'plat help exit-codes')}\n\nHelp topics:\n${topicList()}`)
    .action(async (name: string | undefined) => {
      const { runHelp } = await import('./commands/help.js');
      runHelp(program, name);
    });

  program.addOption(new Option('--debug').hideHelp());
  return program;
}
