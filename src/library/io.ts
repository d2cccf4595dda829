/**
 * The IO the library gives the session layer: nothing on the program's stdout (that belongs to the program), no
 * stdin, no colour or spinner (so chalk and ora are never loaded), and warnings to `onWarning` (default: stderr,
 * one line each, as the command prints them).
 */
import { Readable, Writable } from 'node:stream';
import type { IO } from '../terminal/io.js';
import type { KnownSecrets } from '../redact.js';
import { sanitize } from '../terminal/text.js';

export function libraryIO(secrets: KnownSecrets, onWarning?: (message: string) => void): IO {
  const emit = (line: string) => {
    // As the command's IO does: no secret plat holds, no control or escape sequence a server slipped in.
    const text = sanitize(secrets.scrub(line), 0, { multiline: true });
    if (onWarning) onWarning(text);
    else process.stderr.write(`plat: ${text}\n`);
  };
  const plain = (text: string) => text;
  // The session layer never writes results; a sink keeps an accidental write off the program's own stdout.
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const noInput = Readable.from([]);
  return {
    stdout: sink,
    stderr: sink,
    stdin: noInput,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    stdinIsTTY: false,
    color: false,
    outColor: false,
    out: () => {},
    err: emit,
    note: emit,
    warn: (line) => emit(`warning: ${line}`),
    success: () => {},
    dim: plain,
    bold: plain,
    green: plain,
    red: plain,
    spinner: async () => ({ stop() {} }),
    secrets,
  };
}
