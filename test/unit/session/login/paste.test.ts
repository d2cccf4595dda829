import { PassThrough } from 'node:stream';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../../src/errors.js';
import { nextLineUnlessAborted, readStdinLines } from '../../../../src/session/login/paste.js';

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

describe('nextLineUnlessAborted: a read from stdin against Ctrl-C', () => {
  it('the line when it comes first, and no abort listener left', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    const controller = new AbortController();
    const pending = nextLineUnlessAborted(lines, controller.signal, 'Cancelled.');
    stdin.write('y\n');
    expect(await pending).toBe('y');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    lines.close();
  });

  it('end of input: undefined', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    stdin.end();
    expect(await nextLineUnlessAborted(lines, new AbortController().signal, 'Cancelled.')).toBeUndefined();
    lines.close();
  });

  it('an abort while nobody types: InterruptedError with the message, at once', async () => {
    const lines = readStdinLines(new PassThrough());
    const controller = new AbortController();
    const pending = nextLineUnlessAborted(lines, controller.signal, 'Login cancelled.');
    controller.abort();
    await expect(pending).rejects.toThrow(new InterruptedError('Login cancelled.'));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    lines.close();
  });

  it('a signal aborted already: InterruptedError without reading', async () => {
    const stdin = new PassThrough();
    const lines = readStdinLines(stdin);
    stdin.write('y\n');
    const controller = new AbortController();
    controller.abort();
    await expect(nextLineUnlessAborted(lines, controller.signal, 'Cancelled.')).rejects.toBeInstanceOf(InterruptedError);
    lines.close();
  });
});
