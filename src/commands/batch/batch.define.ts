import { Argument, Option, type Command } from 'commander';
import { completes } from '../../completion/value-kinds.js';
import { examples, type Definitions } from '../definition.js';

/** plat batch [file]; the run is ./batch.ts. */
export function defineBatch(program: Command, the: Definitions): void {
  the.lazily(program.command('batch').description('send many requests from NDJSON lines: parallel over one session, paced, resumable with a journal'), (cmd) =>
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
        const { run } = await import('./batch.js');
        await run(the.contextFor(command), file, flags);
      }),
  );
}
