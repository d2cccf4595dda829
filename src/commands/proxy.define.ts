import { Option, type Command } from 'commander';
import { completes } from '../completion/value-kinds.js';
import { examples, type Definitions } from './definition.js';

/** plat proxy; the run is ./proxy.ts. */
export function defineProxy(program: Command, the: Definitions): void {
  the.lazily(program.command('proxy').description('serve the platform at a local address for any HTTP tool, with your token added (which the tool never sees)'), (cmd) =>
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
starts with the key the URL holds: join paths relative to the URL (api/x, not
/api/x, which replaces the key: 403); a doubled slash after it is one. A
foreign Host, any Origin header, a URL naming another host, CONNECT and TRACE
are refused, and no answer passes on any of the session's secrets. Ctrl-C ends
it. More: plat help scripting, plat help security.`,
      )
      .action(async (flags, command: Command) => {
        const { run } = await import('./proxy.js');
        await run(the.contextFor(command), flags);
      }),
  );
}
