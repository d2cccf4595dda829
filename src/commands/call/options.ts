/**
 * The options of the commands that send one request, defined once: plat call's, which plat api and plat op take too
 * (the same runner behind all three), and plat op's own. Each call makes fresh Option objects, so every command that
 * has them holds its own: call.define.ts and api.define.ts, and the commands plat op makes for an operation (op/command.ts).
 */
import { Option } from 'commander';
import { collect, completes } from '../../completion/value-kinds.js';

/** plat call's request options, in the order its help lists them. */
export function callOptions(): Option[] {
  return [
    new Option('-H, --header <header>', 'add a request header "Name: value" (repeatable)').argParser(collect),
    new Option('-f, --field <key=value>', 'add a string field (repeatable): query on GET/HEAD/DELETE, JSON body otherwise').argParser(collect),
    new Option('-F, --typed-field <key=value>', 'add a typed field: numbers, true/false/null, @file (repeatable)').argParser(collect),
    completes(new Option('--input <file>', 'send a file (or - for stdin) as the request body'), 'files'),
    new Option('-i, --include', 'print the status line and response headers first'),
    new Option('--anonymous', 'send no token'),
    new Option('--timeout <seconds>', 'give up after this many seconds (default: 600)'),
    new Option('--retry <n>', 'retries on 429/503 (and 502/504/resets for GET, HEAD, OPTIONS, PUT, DELETE); default 2 for those methods, 0 for others'),
    new Option('--paginate', 'follow every page and print one JSON array of all the items'),
    new Option('--ndjson', 'with --paginate: one item per line, printed as pages arrive'),
    new Option('--slurp', 'with --paginate: an array of the whole page bodies, not just their items'),
    new Option('--max-pages <n>', 'with --paginate: stop after n pages'),
    new Option('--max-items <n>', 'with --paginate: stop after n items'),
    new Option('--items <path>', 'with --paginate: where the items are in each page (e.g. data.rows), when detection cannot tell'),
    new Option('--next <path>', "with --paginate: the member with the next page's URL or cursor (path=param names the cursor's query parameter)"),
    new Option('--jq <expr>', "filter the JSON response with jq (with --paginate: one array of every page's items, not each page as in gh; with --ndjson: each item)"),
  ];
}

/** plat op's options: its own two, then plat call's (plat op then behaves as plat call). */
export function opOptions(): Option[] {
  return [
    new Option('-p, --param <name=value>', 'a parameter whose name plat uses itself (repeatable)').argParser(collect),
    new Option('--refresh', 'fetch /openapi.json again now (otherwise the cached copy is used for an hour)'),
    ...callOptions(),
  ];
}
