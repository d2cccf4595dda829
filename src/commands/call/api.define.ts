import { Argument, Option, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { callOptions } from './options.js';
import { examples, type Definitions } from '../definition.js';

/** plat api <path>, gh api's shape of plat call; the run is ./api.ts. */
export function defineApi(program: Command, the: Definitions): void {
  the.lazily(program.command('api').description('gh api\'s shape: call a path (GET, or POST with fields) with your token; the response body goes to stdout'), (cmd) => {
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
        const { run } = await import('./api.js');
        await run(the.contextFor(command), path, flags);
      });
  });
}
