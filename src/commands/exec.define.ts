import { Argument, type Command } from 'commander';
import { completes } from '../completion/value-kinds.js';
import { examples, type Definitions } from './definition.js';

/** plat exec -- <command>; the run is ./exec.ts. */
export function defineExec(program: Command, the: Definitions): void {
  the.lazily(program.command('exec').description('run a program with a fresh token in its environment (PLAT_TOKEN, PLAT_BASE_URL)'), (cmd) =>
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
        const { run } = await import('./exec.js');
        await run(the.contextFor(command), argv, flags);
      }),
  );
}
