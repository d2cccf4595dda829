/**
 * plat batch's journal: a header naming the platform and profile it was written for, then one NDJSON record per
 * event, appended and fsynced before the run goes on, so a run that dies (SIGKILL, power) leaves a record a rerun
 * can trust. Records are keyed by the line's id (its line number when it has none), so a person may fix failed lines
 * (in the file, or in the --failed file plat wrote) and run again with the same journal:
 *   {"plat-batch-journal":2,"origin":"https://school.example.com","profile":"default"}
 *   {"id":"s3","hash":"…","sent":true,"key":"…"}   before the line's request goes out (its Idempotency-Key, if any)
 *   {"id":"s3","ok":true,"status":201}             once its answer is in ("settled" when the person said it)
 * A "sent" without an outcome after it is a line whose fate is unknown. Records written at the same moment share one
 * write and one fsync (group commit). A torn last record (the process died mid-write) is ignored.
 *
 * The journal is a place where a file on disk meets the session, so it is opened as untrusted input: never through a
 * symbolic link (O_NOFOLLOW, after an lstat that names it), read whole and checked — header, platform, every record
 * and its hash — before the run sends anything, and written only once it has proved to be a plat journal (a file
 * that is not one keeps every byte).
 */
import { createHash } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import { PlatError, UsageError } from '../errors.js';

export interface JournalRecord {
  /** The line's hash when it was last sent. */
  hash: string;
  /** Sent, and no outcome recorded after it. */
  inFlight: boolean;
  ok?: boolean;
  status?: number | null;
  /** The Idempotency-Key it was sent with (kept across runs). */
  key?: string;
}

/** Whom a journal's requests went to: a journal of one platform or profile is refused for another. */
export interface JournalBinding {
  origin: string;
  /** null with PLAT_TOKEN (no profile's session). */
  profile: string | null;
}

export interface Journal {
  readonly file: string;
  /** What earlier runs recorded for the line with this id (or number). */
  prior(id: string | number): JournalRecord | undefined;
  /** Lines the journal knows: every record's id. */
  readonly size: number;
  /** The first write: the header of a new journal, or the torn last record of an old one cut off. */
  startWriting(): Promise<void>;
  sent(id: string | number, hash: string, key?: string): Promise<void>;
  done(id: string | number, outcome: { ok: boolean; status: number | null; settled?: boolean }): Promise<void>;
  close(): Promise<void>;
}

const VERSION = 2;
/** What lineHash writes: the only hash a record may hold. */
const HASH = /^[0-9a-f]{16}$/;

/** A line's fingerprint: whether a line recorded earlier is the line now. */
export function lineHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * The journal at `file`, read and checked against `binding`; nothing is written until startWriting() (a --check
 * run never calls it). A new file is created only then.
 */
export async function openJournal(file: string, binding: JournalBinding): Promise<Journal> {
  const handle = await openExisting(file);
  let records = new Map<string, JournalRecord>();
  let tornAt: number | undefined;
  let size = 0;
  let endsWhole = true;
  try {
    if (handle) ({ records, tornAt, size, endsWhole } = await readJournal(file, handle, binding));
  } catch (error) {
    await handle?.close();
    if (error instanceof PlatError) throw error;
    throw new PlatError(`Cannot read the journal ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  let writer: fs.FileHandle | undefined = handle;
  const cannotWrite = (error: unknown) =>
    error instanceof PlatError ? error : new PlatError(`Cannot write the journal ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);

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
        if (!writer) throw new PlatError(`Cannot write the journal ${file}: it was not opened for writing.`);
        await writer.write(text);
        await writer.datasync();
        for (const waiter of settle) waiter.resolve();
      } catch (error) {
        for (const waiter of settle) waiter.reject(cannotWrite(error));
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
    prior: (id) => records.get(String(id)),
    get size() {
      return records.size;
    },
    async startWriting() {
      try {
        if (!writer) {
          // Created now, exclusively and without following a link someone made since the lstat.
          writer = await fs.open(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
          await writer.write(`${JSON.stringify({ 'plat-batch-journal': VERSION, origin: binding.origin, profile: binding.profile })}\n`);
        } else if (size === 0) {
          await writer.write(`${JSON.stringify({ 'plat-batch-journal': VERSION, origin: binding.origin, profile: binding.profile })}\n`);
        } else if (tornAt !== undefined) {
          // The next records must not continue the torn one's line (a torn record in the middle is no journal).
          await writer.truncate(tornAt);
        } else if (!endsWhole) {
          // Its last record is whole but its line end never reached the disk: the next record starts a line of its own.
          await writer.write('\n');
        }
      } catch (error) {
        throw cannotWrite(error);
      }
    },
    sent: (id, hash, key) => append(key ? { id, hash, sent: true, key } : { id, hash, sent: true }),
    done: (id, outcome) => append(outcome.settled ? { id, ok: outcome.ok, status: outcome.status, settled: true } : { id, ok: outcome.ok, status: outcome.status }),
    async close() {
      await flushing;
      await writer?.close();
    },
  };
}

/** The journal's handle, or undefined when there is none yet; a link or a non-file is refused by name. */
async function openExisting(file: string): Promise<fs.FileHandle | undefined> {
  let info;
  try {
    info = await fs.lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new PlatError(`Cannot read the journal ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  if (info.isSymbolicLink()) {
    throw new UsageError(`The journal ${file} is a symbolic link: plat writes a journal only to the file named, never through a link. Give --journal the file itself, or a new file.`);
  }
  if (info.isDirectory()) throw new PlatError(`Cannot read the journal ${file}: EISDIR.`);
  if (!info.isFile()) throw new UsageError(`The journal ${file} is not a regular file. Give --journal a new file, or the one an earlier plat batch run wrote.`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UsageError(`The journal ${file} is a symbolic link: plat writes a journal only to the file named, never through a link. Give --journal the file itself, or a new file.`);
    throw new PlatError(`Cannot read the journal ${file}: ${code ?? (error as Error).message}.`);
  }
  // What was opened is the file the lstat saw: not a FIFO or device put in its place in between.
  const opened = await handle.stat();
  if (!opened.isFile() || opened.ino !== info.ino || opened.dev !== info.dev) {
    await handle.close();
    throw new UsageError(`The journal ${file} was replaced while plat opened it. Run plat batch again once nothing else writes that file.`);
  }
  return handle;
}

/** Every record, checked; tornAt: where a torn last record starts (cut off before the first write). */
async function readJournal(file: string, handle: fs.FileHandle, binding: JournalBinding): Promise<{ records: Map<string, JournalRecord>; tornAt?: number; size: number; endsWhole: boolean }> {
  const { size } = await handle.stat();
  const records = new Map<string, JournalRecord>();
  if (size === 0) return { records, size, endsWhole: true };
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  const endsWhole = last[0] === 0x0a;
  let number = 0;
  let offset = 0;
  // Each line is judged when the next one comes: only the last may be torn (no line end: the process died writing
  // it, so what it says never happened), and every other line must be a record.
  let previous: { text: string; start: number; number: number } | undefined;
  const judge = (line: { text: string; number: number }) => {
    let record: Record<string, unknown> | undefined;
    try {
      const value = JSON.parse(line.text) as unknown;
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) record = value as Record<string, unknown>;
    } catch {
      record = undefined;
    }
    if (line.number === 1) {
      if (!record || !('plat-batch-journal' in record)) throw notAJournal(file, 1);
      checkHeader(file, record, binding);
    } else if (!record) {
      throw notAJournal(file, line.number);
    } else {
      readRecord(file, line.number, record, records);
    }
  };
  const stream = handle.createReadStream({ start: 0, autoClose: false, encoding: 'utf8' });
  for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
    number++;
    if (previous) judge(previous);
    previous = { text, start: offset, number };
    offset += Buffer.byteLength(text) + 1;
  }
  if (!previous) return { records, size, endsWhole };
  if (endsWhole || previous.number === 1) {
    judge(previous);
    return { records, size, endsWhole };
  }
  return { records, size, tornAt: await afterLastLineEnd(handle, size, previous.start), endsWhole };
}

/**
 * Where the torn last line starts, in bytes: just after the file's last line end. Counted from the bytes, not from
 * the decoded lines (a hand-edited journal's CRLF endings or invalid UTF-8 would shift a count made from text, and the
 * cut would then fall inside a whole record). `counted`: the count from the text, for a torn line longer than the
 * window read here.
 */
async function afterLastLineEnd(handle: fs.FileHandle, size: number, counted: number): Promise<number> {
  const window = Math.min(size, 1 << 20);
  const tail = Buffer.alloc(window);
  await handle.read(tail, 0, window, size - window);
  const end = tail.lastIndexOf(0x0a);
  return end === -1 ? counted : size - window + end + 1;
}

function checkHeader(file: string, header: Record<string, unknown>, binding: JournalBinding): void {
  if (header['plat-batch-journal'] === 1) {
    throw new UsageError(
      `The journal ${file} was written by an earlier plat, which did not record the platform it was for. Give --journal a new file (the lines it recorded as done are sent again unless you leave them out of the input).`,
    );
  }
  if (header['plat-batch-journal'] !== VERSION || typeof header.origin !== 'string' || !(typeof header.profile === 'string' || header.profile === null)) {
    throw notAJournal(file, 1);
  }
  if (header.origin !== binding.origin || header.profile !== binding.profile) {
    const theirs = `${safe(header.origin)}${header.profile === null ? '' : ` (profile ${safe(header.profile)})`}`;
    const ours = `${binding.origin}${binding.profile === null ? '' : ` (profile ${binding.profile})`}`;
    throw new UsageError(
      `The journal ${file} records a run against ${theirs}; this run is against ${ours}. Nothing was sent. Give this run a journal of its own, or run it with the platform and profile the journal names.`,
    );
  }
}

function readRecord(file: string, number: number, record: Record<string, unknown>, records: Map<string, JournalRecord>): void {
  const id = record.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) throw notAJournal(file, number);
  const name = String(id);
  if (record.sent === true) {
    if (typeof record.hash !== 'string' || !HASH.test(record.hash)) throw notAJournal(file, `the hash of line ${number} is not one plat writes`);
    if (record.key !== undefined && (typeof record.key !== 'string' || record.key === '')) throw notAJournal(file, number);
    const before = records.get(name);
    // A line sent again keeps its key: the same Idempotency-Key on every try, across runs, while its text is the same.
    const key = typeof record.key === 'string' ? record.key : before?.hash === record.hash ? before.key : undefined;
    records.set(name, { hash: record.hash, inFlight: true, key });
    return;
  }
  const entry = records.get(name);
  if (!entry || typeof record.ok !== 'boolean' || !(typeof record.status === 'number' || record.status === null)) throw notAJournal(file, number);
  entry.inFlight = false;
  entry.ok = record.ok;
  entry.status = record.status;
}

const safe = (value: unknown) => String(value).replace(/[^\x20-\x7e]/g, '?').slice(0, 200);

function notAJournal(file: string, why: number | string): UsageError {
  const reason = typeof why === 'number' ? `line ${why} is not one of its records` : why;
  return new UsageError(`${file} is not a plat batch journal (${reason}); nothing was written to it or sent. Give --journal a new file, or the one an earlier plat batch run wrote.`);
}
