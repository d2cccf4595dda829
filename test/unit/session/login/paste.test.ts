import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readStdinLines } from '../../../../src/session/login/paste.js';

describe('readStdinLines', () => {
  it('next() returns lines in order, CRLF or LF, and a last line without a newline', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    stdin.write('first\r\nsecond\n');
    stdin.end('third');
    expect(await lines.next()).toBe('first');
    expect(await lines.next()).toBe('second');
    expect(await lines.next()).toBe('third');
    expect(await lines.next()).toBeUndefined();
    lines.close();
  });

  it('a pending next() resolves when a line arrives later', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    const pending = lines.next();
    stdin.write('secret-line\n');
    expect(await pending).toBe('secret-line');
    lines.close();
  });

  it('end-of-file resolves waiting and later next() calls with undefined', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    const pending = lines.next();
    stdin.end();
    expect(await pending).toBeUndefined();
    expect(await lines.next()).toBeUndefined();
  });

  it('onLine() receives the lines buffered so far, then later ones, and not the one next() took', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    const first = lines.next();
    stdin.write('client-secret\nhttp://127.0.0.1:1/callback?a=1\nsecond paste\n');
    expect(await first).toBe('client-secret');
    await new Promise((resolve) => setImmediate(resolve));
    const seen: string[] = [];
    lines.onLine((line) => seen.push(line));
    expect(seen).toEqual(['http://127.0.0.1:1/callback?a=1', 'second paste']);
    const later = new Promise<void>((resolve) => {
      const check = () => (seen.length === 3 ? resolve() : setImmediate(check));
      check();
    });
    stdin.write('third paste\n');
    await later;
    expect(seen).toEqual(['http://127.0.0.1:1/callback?a=1', 'second paste', 'third paste']);
    lines.close();
  });

  it('close() destroys a non-TTY stdin so it cannot keep the process alive', () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    void lines.next();
    lines.close();
    expect(stdin.destroyed).toBe(true);
  });
});
