import { type Command } from 'commander';
import { examples, forOperations, type Definitions } from './definition.js';

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

/** plat mcp; the run is src/mcp/ (loaded from dist/mcp.cjs by src/mcp/load.ts). */
export function defineMcp(program: Command, the: Definitions): void {
  the.lazily(program.command('mcp').description('serve the API to AI agents: a Model Context Protocol server on stdin/stdout, as you and within your scopes'), (cmd) =>
    cmd
      .addOption(forOperations('offer exactly these operations as tools (whoami only if named, no call tool)'))
      .option('--allow-write', 'also offer operations that change data (POST, PUT, PATCH, DELETE); default: reading only')
      .option('--concurrency <n>', 'requests at the platform at once, 1 to 64 (default: 8); more calls wait in order')
      .addHelpText(
        'after',
        examples(
          'plat mcp                                            # the read operations, as the default profile',
          'plat mcp --profile school --for listCourses --for getCourse',
          'plat mcp --allow-write                              # also operations that change data',
          'plat mcp --concurrency 4                            # at most 4 requests at the platform at once',
        ) + `\n\n${MCP_HOSTS}`,
      )
      .action(async (flags, command: Command) => {
        const { loadMcpCommand } = await import('../mcp/load.js');
        const { run } = await loadMcpCommand();
        await run(the.contextFor(command), flags);
      }),
  );
}
