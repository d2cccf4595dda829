/**
 * plat batch's journal: one NDJSON record per event, appended and fsynced before the run goes on, so a run that
 * dies (SIGKILL, power) leaves a record a rerun can trust:
 *   {"line":3,"hash":"…","sent":true,"key":"…"}   before line 3's request goes out (with its Idempotency-Key, if any)
 *   {"line":3,"ok":true,"status":201}             once its answer is in
 * A rerun skips lines that succeeded, sends failed ones again, and treats "sent" without an outcome as unknown.
 * Records written at the same moment share one write and one fsync (group commit), so a journal costs little at
 * high concurrency. A torn last record (the process died mid-write) is ignored.
 */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import { PlatError, UsageError } from '../errors.js';

interface JournalLine {
  hash: string;
  /** Sent, and no outcome recorded after it. */
  inFlight: boolean;
  ok?: boolean;
  status?: number | null;
  key?: string;
}

export interface Journal {
  readonly file: string;
  /** What an earlier run recorded for this line. */
  prior(line: number): JournalLine | undefined;
  sent(line: number, hash: string, key?: string): Promise<void>;
  done(line: number, outcome: { ok: boolean; status: number | null }): Promise<void>;
  close(): Promise<void>;
}

const HEADER = { 'plat-batch-journal': 1 };

/** A line's fingerprint: a journal kept for one input is refused for another. */
export function lineHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export async function openJournal(file: string): Promise<Journal> {
  let lines: Map<number, JournalLine>;
  try {
    lines = await readJournal(file);
  } catch (error) {
    // A directory or an unreadable file named as the journal: said in plat's words (EISDIR, EACCES), not a crash.
    if (error instanceof PlatError) throw error;
    throw new PlatError(`Cannot read the journal ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'a+', 0o600);
    const { size } = await handle.stat();
    if (size === 0) await handle.write(`${JSON.stringify(HEADER)}\n`);
    else await dropTornTail(file, handle, size);
  } catch (error) {
    if (error instanceof PlatError) throw error;
    throw new PlatError(`Cannot write the journal ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  let queue: string[] = [];
  let waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (queue.length > 0) {
      const text = queue.join('');
      const settle = waiters;
      queue = [];
      waiters = [];
      try {
        await handle.write(text);
        await handle.datasync();
        for (const waiter of settle) waiter.resolve();
      } catch (error) {
        const failure = new PlatError(`Cannot write the journal ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
        for (const waiter of settle) waiter.reject(failure);
      }
    }
    flushing = undefined;
  };
  const append = (record: object) =>
    new Promise<void>((resolve, reject) => {
      queue.push(`${JSON.stringify(record)}\n`);
      waiters.push({ resolve, reject });
      flushing ??= flush();
    });
  return {
    file,
    prior: (line) => lines.get(line),
    sent: (line, hash, key) => append(key ? { line, hash, sent: true, key } : { line, hash, sent: true }),
    done: (line, outcome) => append({ line, ok: outcome.ok, status: outcome.status }),
    async close() {
      await flushing;
      await handle.close();
    },
  };
}

/**
 * A run killed mid-write leaves a partial last record; the next records must not be appended to its line (that
 * would make a torn record in the middle, and the journal unreadable), so it is cut off first.
 */
async function dropTornTail(file: string, handle: fs.FileHandle, size: number): Promise<void> {
  const length = Math.min(size, 64 * 1024);
  const tail = Buffer.alloc(length);
  await handle.read(tail, 0, length, size - length);
  if (tail[length - 1] === 0x0a) return;
  const lastNewline = tail.lastIndexOf(0x0a);
  if (lastNewline < 0) throw notAJournal(file, 'its last record is longer than a journal record can be');
  await handle.truncate(size - length + lastNewline + 1);
}

async function readJournal(file: string): Promise<Map<number, JournalLine>> {
  const lines = new Map<number, JournalLine>();
  let stream;
  try {
    await fs.access(file);
    stream = createReadStream(file, 'utf8');
  } catch {
    return lines;
  }
  let first = true;
  let number = 0;
  let torn = false;
  for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
    number++;
    if (text.trim() === '') continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Only the last record may be torn; anything else means this is not (or no longer) a journal.
      torn = true;
      continue;
    }
    if (torn) throw notAJournal(file, number - 1);
    if (first) {
      first = false;
      if (record['plat-batch-journal'] !== 1) throw notAJournal(file, number);
      continue;
    }
    const line = record.line;
    if (typeof line !== 'number' || !Number.isInteger(line) || line < 1) throw notAJournal(file, number);
    if (record.sent === true) {
      const before = lines.get(line);
      // A line sent again keeps its key: the same Idempotency-Key on every try, across runs.
      lines.set(line, { hash: String(record.hash), inFlight: true, key: typeof record.key === 'string' ? record.key : before?.key });
    } else {
      const entry = lines.get(line);
      if (!entry) throw notAJournal(file, number);
      entry.inFlight = false;
      entry.ok = record.ok === true;
      entry.status = typeof record.status === 'number' ? record.status : null;
    }
  }
  return lines;
}

function notAJournal(file: string, why: number | string): UsageError {
  const reason = typeof why === 'number' ? `line ${why} is not one of its records` : why;
  return new UsageError(`${file} is not a plat batch journal (${reason}). Give --journal a new file, or the one an earlier plat batch run wrote.`);
}
