/**
 * plat batch's input, read twice (checked, then sent), streaming both times so memory stays flat whatever its
 * length. Standard input cannot be read again, so the first pass copies it to a private temporary file.
 */
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Context } from '../../context.js';
import { PlatError, UsageError } from '../../errors.js';

export interface Input {
  /** A fresh stream of the input's text (after the first pass: the file, or stdin's copy). */
  open(): Readable;
  /** The first pass reads this instead (stdin, copied as it is read). */
  first(): Readable;
  /** Settles once the first pass's copy is whole (rejects, in plat's words, if it could not be written). */
  copied(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function openInput(ctx: Context, file: string | undefined): Promise<Input> {
  if (file !== undefined && file !== '-') {
    try {
      const info = await fs.stat(file);
      if (!info.isFile()) throw new UsageError(`${file} is not a regular file: give plat batch a file of NDJSON lines, or - for stdin.`);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
    const open = () => createReadStream(file, 'utf8');
    return { open, first: open, copied: async () => {}, cleanup: async () => {} };
  }
  if (ctx.io.stdinIsTTY) throw new UsageError('plat batch reads NDJSON requests from a file or a pipe: plat batch requests.ndjson, or … | plat batch -.');
  const cannotCopy = (error: unknown) =>
    new PlatError(`Cannot keep a copy of stdin in ${os.tmpdir()} for plat batch's second pass: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Free some space there (or set TMPDIR), or give plat batch a file.`);
  let dir: string;
  try {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'plat-batch-'));
  } catch (error) {
    throw cannotCopy(error);
  }
  const copy = path.join(dir, 'input.ndjson');
  let done: Promise<void> = Promise.resolve();
  return {
    open: () => createReadStream(copy, 'utf8'),
    first: () => {
      const out = createWriteStream(copy, { mode: 0o600 });
      // The copy is read back only after the first pass has consumed stdin to its end and the copy is flushed; a
      // write that fails (a full disk) is said in plat's words, never an unhandled stream error.
      done = new Promise((resolve, reject) => {
        out.once('close', resolve);
        out.once('error', (error) => reject(cannotCopy(error)));
      });
      done.catch(() => {}); // awaited by copied(); never an unhandled rejection meanwhile
      ctx.io.stdin.pipe(out);
      return ctx.io.stdin as Readable;
    },
    copied: () => done,
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}
