import { Argument, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { examples, type Definitions } from '../definition.js';

/** plat scopes [plan <operationId>...]; the runs are ./scopes.ts and ./plan.ts. */
export function defineScopes(program: Command, the: Definitions): void {
  the.lazily(program.command('scopes').description('list the scopes the platform offers and which your session holds; plan the least set some operations need'), (cmd) =>
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
          const { unknownSubcommand } = await import('./plan.js');
          throw unknownSubcommand(plan);
        }
        if (plan === 'plan') {
          const { runPlan } = await import('./plan.js');
          await runPlan(the.contextFor(command), operationIds);
          return;
        }
        const { run } = await import('./scopes.js');
        await run(the.contextFor(command));
      }),
  );
}
