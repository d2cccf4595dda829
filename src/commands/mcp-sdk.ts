/**
 * The MCP TypeScript SDK behind one narrow function: an MCP server on a pair of streams that answers tools/list
 * and tools/call with what `plat mcp` gives it. With the command it is built into dist/mcp.cjs (mcp-load.ts): the
 * SDK and what it brings (zod) are ~320 KB that no other command reads, parses or compiles.
 */
import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

export interface StdioServerOptions {
  name: string;
  version: string;
  instructions: string;
  stdin: Readable;
  stdout: Writable;
  listTools(): Promise<Tool[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** A message that is not JSON-RPC, a transport failure: the server goes on. */
  onError(error: Error): void;
}

export interface RunningServer {
  close(): Promise<void>;
  /** Settles when the transport closes. */
  closed: Promise<void>;
}

export async function startStdioServer(options: StdioServerOptions): Promise<RunningServer> {
  const server = new Server(
    { name: options.name, version: options.version },
    // The validator is the SDK's for elicitation answers; plat mcp asks the client nothing (the build leaves ajv out).
    { capabilities: { tools: {} }, instructions: options.instructions, jsonSchemaValidator: { getValidator: refuseElicitation } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await options.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, (request) => options.callTool(request.params.name, request.params.arguments ?? {}));
  server.onerror = options.onError;
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport(options.stdin, options.stdout));
  return { close: () => server.close(), closed };
}

function refuseElicitation(): never {
  throw new Error('plat mcp validates no elicitation: it asks for none');
}
