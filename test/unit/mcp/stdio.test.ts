/**
 * plat mcp's stdio transport on its own (src/mcp/stdio.ts), on a pair of in-memory streams: the bounds that
 * answer. The built server behind the MCP SDK's client is in test/cli/mcp.test.ts.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BoundedStdioTransport } from '../../../src/mcp/stdio.js';

function open(maxBytes = 1024) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new BoundedStdioTransport(stdin, stdout, maxBytes);
  const messages: unknown[] = [];
  const errors: string[] = [];
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error.message);
  let written = '';
  stdout.setEncoding('utf8').on('data', (d: string) => (written += d));
  const answers = () => written.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  return { stdin, transport, messages, errors, answers };
}

const request = (id: number | string, extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'call', arguments: extra } });

describe('BoundedStdioTransport', () => {
  it('hands on messages split across chunks and several to a chunk', async () => {
    const t = open();
    await t.transport.start();
    const a = JSON.stringify(request(1));
    const b = JSON.stringify(request(2));
    t.stdin.write(a.slice(0, 10));
    t.stdin.write(`${a.slice(10)}\n${b}\r\n\n`);
    expect(t.messages).toEqual([request(1), request(2)]);
  });

  it('an oversized message is skipped unread and answered for its id, at its end (as the SDK writes it) or its start; then it goes on', async () => {
    const t = open(1024);
    await t.transport.start();
    const big = 'x'.repeat(5000);
    // The SDK's clients write the id last.
    const sdkShape = JSON.stringify({ method: 'tools/call', params: { name: 'call', arguments: { id: 99, q: big } }, jsonrpc: '2.0', id: 41 });
    for (let i = 0; i < sdkShape.length; i += 700) t.stdin.write(sdkShape.slice(i, i + 700));
    t.stdin.write('\n');
    t.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'first', method: 'tools/call', params: { q: big } })}\n`);
    t.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { q: big } })}\n`);
    t.stdin.write(`${JSON.stringify(request(3))}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    const answers = t.answers();
    expect(answers.map((a) => a.id)).toEqual([41, 'first', undefined]);
    for (const answer of answers) expect(answer.error).toEqual({ code: -32600, message: expect.stringMatching(/^The message is \d+ bytes, over plat mcp's bound of 0\.0 MiB, so it was not read/) });
    expect(t.messages).toEqual([request(3)]);
    expect(t.errors).toHaveLength(3);
  });

  it('an answer that cannot be serialised goes as an error for its request', async () => {
    const t = open();
    await t.transport.start();
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    await t.transport.send({ jsonrpc: '2.0', id: 8, result: { content: [], structuredContent: { deep } } });
    expect(t.answers()).toEqual([{ jsonrpc: '2.0', id: 8, error: { code: -32603, message: expect.stringMatching(/^plat mcp could not encode its answer \(Maximum call stack size exceeded\)\.$/) } }]);
  });

  it('close stops reading and says so once', async () => {
    const t = open();
    let closed = 0;
    t.transport.onclose = () => void closed++;
    await t.transport.start();
    await t.transport.close();
    await t.transport.close();
    t.stdin.write(`${JSON.stringify(request(1))}\n`);
    expect(closed).toBe(1);
    expect(t.messages).toEqual([]);
  });
});
