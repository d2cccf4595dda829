/**
 * The MCP TypeScript SDK behind one narrow function: an MCP server on a pair of streams that answers tools/list
 * and tools/call with what `plat mcp` gives it. With the command it is built into dist/mcp.cjs (load.ts): the
 * SDK and what it brings (zod) are ~320 KB that no other command reads, parses or compiles.
 */
import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { BoundedStdioTransport } from './stdio.js';

export interface StdioServerOptions {
  name: string;
  version: string;
  instructions: string;
  stdin: Readable;
  stdout: Writable;
  listTools(): Promise<Tool[]>;
  /** `signal` aborts when the client cancels the call (notifications/cancelled) or the connection closes. */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  /** A message that is not JSON-RPC, a transport failure: the server goes on. */
  onError(error: Error): void;
}

export interface RunningServer {
  close(): Promise<void>;
  /** Tells the client the tools changed (a login made while the server runs), so it lists them again. */
  toolsChanged(): void;
  /** Settles when the transport closes. */
  closed: Promise<void>;
}

export async function startStdioServer(options: StdioServerOptions): Promise<RunningServer> {
  const server = new Server(
    { name: options.name, version: options.version },
    // The validator is the SDK's for elicitation answers; plat mcp asks the client nothing (the build leaves ajv out).
    { capabilities: { tools: { listChanged: true } }, instructions: options.instructions, jsonSchemaValidator: { getValidator: refuseElicitation } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await options.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => options.callTool(request.params.name, request.params.arguments ?? {}, extra.signal));
  server.onerror = options.onError;
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new BoundedStdioTransport(options.stdin, options.stdout));
  return {
    close: () => server.close(),
    toolsChanged: () => void server.sendToolListChanged().catch(() => undefined),
    closed,
  };
}

function refuseElicitation(): never {
  throw new Error('plat mcp validates no elicitation: it asks for none');
}
