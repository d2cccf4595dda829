/**
 * Lines from stdin while a login waits: the first may be a client secret (--client-secret-stdin); later ones may
 * be the address the browser ended on, pasted by someone whose browser runs on another machine. End-of-file is
 * not an error: scripts run plat with </dev/null.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable } from 'node:stream';
import { InterruptedError } from '../../errors.js';

export interface StdinLines {
  next(): Promise<string | undefined>;
  onLine(handler: (line: string) => void): void;
  close(): void;
}

export function readStdinLines(stdin: Readable): StdinLines {
  let rl: Interface | undefined;
  const buffered: string[] = [];
  const waiters: Array<(line: string | undefined) => void> = [];
  let handler: ((line: string) => void) | undefined;
  let ended = false;
  const start = () => {
    if (rl) return;
    rl = createInterface({ input: stdin, terminal: false, crlfDelay: Infinity });
    rl.on('line', (line) => {
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else if (handler) handler(line);
      else buffered.push(line);
    });
    rl.on('close', () => {
      ended = true;
      for (const waiter of waiters.splice(0)) waiter(undefined);
    });
  };
  return {
    next() {
      start();
      if (buffered.length > 0) return Promise.resolve(buffered.shift());
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => waiters.push(resolve));
    },
    onLine(h) {
      start();
      handler = h;
      for (const line of buffered.splice(0)) h(line);
    },
    close() {
      rl?.close();
      stdin.pause();
      // A pipe or /dev/null would otherwise keep the event loop alive after the command is done.
      if (!(stdin as { isTTY?: boolean }).isTTY) (stdin as Readable & { destroy?: () => void }).destroy?.();
    },
  };
}

/**
 * The next line of stdin, unless `signal` aborts first (Ctrl-C while plat waits on a terminal nobody types into):
 * then InterruptedError with `message`, at once. The one race of a read against Ctrl-C, for --client-secret-stdin,
 * login's question for a base URL and step-up's question; the abort listener goes either way.
 */
export async function nextLineUnlessAborted(stdin: StdinLines, signal: AbortSignal, message: string): Promise<string | undefined> {
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new InterruptedError(message));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([stdin.next(), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
