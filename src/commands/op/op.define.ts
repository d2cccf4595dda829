import { Argument, Option, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { opOptions } from '../call/options.js';
import { examples, type Definitions } from '../definition.js';

/** plat op [filter] | <operationId> [--<parameter> <value>]...; the run is ./op.ts. */
export function defineOp(program: Command, the: Definitions): void {
  the.lazily(program.command('op').description("list the API's operations from its /openapi.json, or call one by its operationId with checked parameters"), (cmd) => {
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
        const { run } = await import('./op.js');
        await run(the.contextFor(command), command, command.args);
      });
    the.showOptions(cmd, [...opOptions(), new Option('-h, --help', 'show help')]);
  });
}
