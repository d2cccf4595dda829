// node:fs's promises, not node:fs/promises: the getter loads them on first use (~1 ms of start-up a read-only
// command never needs; test/cli/startup.test.ts holds it).
import { lstatSync, promises as fs, readFileSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ExitCode, PlatError } from '../errors.js';
import { readTextIfPresent } from './read-if-present.js';

const PRIVATE_DIR_MODE = 0o700;

/** Error codes that mean "this location cannot be written", as opposed to a bug or a transient failure. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'EISDIR', 'ENOSPC', 'EDQUOT', 'ELOOP']);

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** A one-sentence reason for a file-system error, without the stack or the syscall noise. */
function describeFsError(error: unknown): string {
  switch (errorCode(error)) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOTDIR':
      return 'a parent of it is a file, not a directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'EEXIST':
      return 'something else already exists there';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'ELOOP':
      return 'too many symbolic links';
    case 'ENOENT':
      return 'no such file or directory';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/** The error for a config location plat cannot write; `exitCode` 1 ("local storage errors"). */
export function storageError(target: string, error: unknown, action = 'write'): PlatError {
  const hint = UNWRITABLE.has(errorCode(error) ?? '')
    ? 'Fix its permissions, or set PLAT_CONFIG_DIR to a writable directory.'
    : 'Check the path, or set PLAT_CONFIG_DIR to another directory.';
  return new PlatError(`Cannot ${action} ${target}: ${describeFsError(error)}. ${hint}`, ExitCode.failure, { cause: error });
}

/**
 * `mkdir -p` for a directory that holds private state: created 0700 (and chmod'ed to exactly 0700, whatever the
 * umask). A directory that already existed is left as its owner set it.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  let created: string | undefined;
  try {
    created = await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    throw storageError(dir, error, 'create the directory');
  }
  if (created !== undefined) {
    try {
      await fs.chmod(dir, PRIVATE_DIR_MODE);
    } catch {
      // Best effort: on file systems without Unix modes (FAT, some network mounts) chmod can fail harmlessly.
    }
  }
}

/**
 * Replaces `file` so that a reader sees either the old content or the new, never a mix or a truncated file, even
 * if plat is killed mid-write: write a temporary sibling (created exclusively, already `mode`), fsync it, rename it
 * over the target, then fsync the directory so the rename itself survives a crash.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(file);
  // Unique enough with O_EXCL (a clash fails, never overwrites); node:crypto would cost start-up time here.
  const unique = `${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 10)}`;
  const temp = join(dir, `.${basename(file)}.${unique}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(temp, 'wx', mode);
    // The umask may have narrowed the mode at creation; the caller asked for exactly this one.
    await handle.chmod(mode).catch(() => undefined);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw storageError(file, error);
  }
  await fsyncDir(dir);
  await removeStaleTemps(file);
}

/**
 * Removes the temporary siblings of `file` that a plat killed mid-write left behind (their process is gone). They
 * can hold a whole session, so they must not outlive the next write or a logout. Best effort.
 */
export async function removeStaleTemps(file: string): Promise<void> {
  const dir = dirname(file);
  const prefix = `.${basename(file)}.`;
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || isAlive(pid)) continue;
    await fs.rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by someone else.
    return errorCode(error) === 'EPERM';
  }
}

async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not every platform can open or fsync a directory (Windows cannot); the rename is still atomic there.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * OpenSSH's StrictModes for plat's own state: a directory or file that another user owns (root aside), or that
 * group or others may write, is refused — whoever can write there can point a profile's base URL at their own
 * server or swap a session. Missing paths pass (plat creates them 0700/0600). No-op where there are no Unix modes.
 * Returns what lstat found (undefined: missing, or no Unix modes), so a caller need not stat the path again.
 */
export function assertTrusted(target: string, kind: 'directory' | 'file'): Stats | undefined {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return undefined;
  let info: Stats;
  try {
    // Synchronous, like readJsonFile: one lstat is microseconds, a trip through libuv's thread pool is not.
    info = lstatSync(target);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw storageError(target, error, 'read');
  }
  const uid = process.getuid();
  // Built only for a message: a regular expression run twice in a start is compiled to machine code (~0.1 ms).
  const quoted = () => `'${target.replace(/'/g, `'\\''`)}'`;
  if (info.uid !== uid && info.uid !== 0) {
    throw new PlatError(
      `The ${kind} ${target} belongs to another user (uid ${info.uid}), so plat will not trust what it holds. ` +
        `If it is yours, run: chown -R ${uid} ${quoted()}; otherwise set PLAT_CONFIG_DIR to a directory of your own.`,
      ExitCode.failure,
    );
  }
  if ((info.mode & 0o022) !== 0) {
    const who = (info.mode & 0o020) !== 0 && (info.mode & 0o002) !== 0 ? 'group and others' : (info.mode & 0o020) !== 0 ? 'its group' : 'others';
    throw new PlatError(
      `The ${kind} ${target} can be written by ${who}, so plat will not trust what it holds. Run: chmod ${kind === 'directory' ? '700' : '600'} ${quoted()}`,
      ExitCode.failure,
    );
  }
  return info;
}

export interface ReadJsonOptions {
  /** What the user should do when the file is damaged; the default suits token and profile files. */
  fix?: string;
  /** Missing more often than not (a cache plat op may never have written): looked for before it is read. */
  oftenMissing?: boolean;
}

/**
 * Reads and parses a JSON file. Missing file: `undefined`. A file that is not valid JSON (hand-edited, or cut short
 * by a crash before plat wrote files atomically) is a PlatError that names the file and the fix.
 */
export async function readJsonFile(file: string, options: ReadJsonOptions = {}): Promise<unknown> {
  let text: string | undefined;
  try {
    // Synchronous: these files are small, and on the token path an asynchronous read (a trip through libuv's
    // thread pool per file) costs 2–3 ms of start-up more.
    text = options.oftenMissing ? readTextIfPresent(file) : readFileSync(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw storageError(file, error, 'read');
  }
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // No `cause`: V8's SyntaxError quotes the text around the error, which may be part of a token.
    throw corruptFileError(file, text.trim() === '' ? 'is empty' : 'is not valid JSON', options.fix);
  }
}

/**
 * Stored data plat cannot use (a file cut short or edited by hand, a foreign keychain entry), as opposed to one it
 * cannot reach: the commands that replace or forget it (login, logout) carry on past it.
 */
export class DamagedDataError extends PlatError {
  constructor(message: string) {
    super(message, ExitCode.failure);
    this.name = 'DamagedDataError';
  }
}

/** The error for a file whose content plat cannot use; never quotes the content, which may hold a token. */
export function corruptFileError(file: string, what: string, fix?: string): DamagedDataError {
  const todo = fix ?? 'Delete it or run `plat login` again.';
  return new DamagedDataError(`${file} ${what} (it may have been edited by hand or cut short). ${todo}`);
}
