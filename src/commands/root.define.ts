import { Option, type Command } from 'commander';
import { completes } from '../completion/value-kinds.js';
import { topicList } from '../help/topics.js';

/** plat itself: the global options every command takes, and the root help's text after the list of commands. */
export function defineRoot(program: Command): void {
  program
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
}
