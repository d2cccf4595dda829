import { Argument, Option, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { callOptions } from './options.js';
import { examples, type Definitions } from '../definition.js';

/** plat call <method> <path> (also a plain form, src/dispatch.ts); the run is ./call.ts, its options ./options.ts. */
export function defineCall(program: Command, the: Definitions): void {
  the.lazily(program.command('call').description('call the API with your token; the response body goes to stdout'), (cmd) => {
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
          const { callUsageError } = await import('./usage.js');
          const error = callUsageError(the.contextFor(command), method, path, flags);
          if (error) throw error;
        }
        const { run } = await import('./call.js');
        await run(the.contextFor(command), method, path!, flags);
      });
  });
}
