/**
 * plat mcp's stdio transport: newline-delimited JSON-RPC on a pair of streams, as the SDK's StdioServerTransport
 * speaks it, with bounds that answer. The SDK's own transport closes itself when unread input passes 10 MiB (one
 * large tools/call argument), so the server ended with exit 0 and the host saw it vanish; it answered a line that
 * is not JSON with nothing; and a result it could not serialise (nested 100,000 deep) was a thrown send, the
 * request never answered. Here:
 * - a message over MAX_MESSAGE_BYTES is skipped to its end without being kept, and answered with a JSON-RPC error
 *   (-32600) for its id when the id stands at its start or its end (else without an id), so the client's request
 *   ends at once;
 * - a line that is not JSON is answered with -32700 (parse error), one that is JSON but not JSON-RPC with -32600;
 * - an answer that cannot be serialised goes as a -32603 error for the same id;
 * - a failure of the streams themselves is reported through onerror, and the command ends non-zero (mcp.ts).
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The largest message plat mcp reads: far above any tool call an agent makes, far below what would hurt memory. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** How much of an oversized message is kept to find its id. */
const ID_PROBE_BYTES = 512;

/** undefined: the id could not be read (the error then goes without one, which the SDK's clients accept). */
type Id = string | number | undefined;

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Inside a message over the bound: its first and last bytes (for the id) and its length so far. */
  private oversized: { head: Buffer; tail: Buffer; length: number } | undefined;
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.chunks = [];
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    let line: string;
    try {
      line = `${JSON.stringify(message)}\n`;
    } catch (error) {
      // A result that cannot be written (too deep, a cycle): the request still gets its answer.
      if (!('id' in message) || message.id === undefined) throw error;
      line = `${JSON.stringify(errorMessage(message.id, -32603, `plat mcp could not encode its answer (${(error as Error).message}).`))}\n`;
    }
    await this.write(line);
  }

  private write(line: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(line)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  private readonly onStreamError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer | string) => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    while (data.length > 0 && !this.closed) {
      const end = data.indexOf(0x0a);
      const part = end === -1 ? data : data.subarray(0, end);
      data = end === -1 ? Buffer.alloc(0) : data.subarray(end + 1);
      this.take(part);
      if (end !== -1) this.lineEnded();
    }
  };

  /** Part of the current line: kept while under the bound; past it, only its first bytes and its length. */
  private take(part: Buffer): void {
    if (this.oversized) {
      this.oversized.length += part.length;
      this.oversized.tail = Buffer.from(Buffer.concat([this.oversized.tail, part]).subarray(-ID_PROBE_BYTES));
      return;
    }
    if (this.size + part.length <= this.maxBytes) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    const all = Buffer.concat([...this.chunks, part]);
    this.oversized = { head: Buffer.from(all.subarray(0, ID_PROBE_BYTES)), tail: Buffer.from(all.subarray(-ID_PROBE_BYTES)), length: all.length };
    this.chunks = [];
    this.size = 0;
  }

  private lineEnded(): void {
    if (this.oversized) {
      const { head, tail, length } = this.oversized;
      this.oversized = undefined;
      const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      this.reply(idIn(head.toString('latin1'), tail.toString('latin1')), -32600, `The message is ${length > 1024 * 1024 ? mib(length) : `${length} bytes`}, over plat mcp's bound of ${mib(this.maxBytes)}, so it was not read; send less (a file or a narrower call).`);
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.reply(undefined, -32700, 'Parse error: the line is not JSON.');
      return;
    }
    const checked = JSONRPCMessageSchema.safeParse(parsed);
    if (!checked.success) {
      const id = typeof parsed === 'object' && parsed !== null ? (parsed as { id?: unknown }).id : undefined;
      this.reply(typeof id === 'string' || typeof id === 'number' ? id : undefined, -32600, 'Invalid request: the message is not JSON-RPC 2.0.');
      return;
    }
    this.onmessage?.(checked.data);
  }

  private reply(id: Id, code: number, message: string): void {
    this.onerror?.(new Error(message));
    void this.write(`${JSON.stringify(errorMessage(id, code, message))}\n`);
  }
}

function errorMessage(id: Id, code: number, message: string) {
  return { jsonrpc: '2.0', ...(id === undefined ? {} : { id }), error: { code, message } };
}

const ID_VALUE = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
/** The top-level id: the last member (as the SDK's clients write it), or one before the first nested object. */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);
const ID_AT_START = new RegExp(String.raw`^\s*\{[^{]*?"id"\s*:\s*${ID_VALUE}\s*[,}]`);

function idIn(head: string, tail: string): Id {
  const match = ID_AT_END.exec(tail) ?? ID_AT_START.exec(head);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return undefined;
  }
}
