// plat batch's journal (src/batch/journal.ts) read back as a rerun reads it: what succeeded, what was in
// flight (with its Idempotency-Key), a torn last record from a process killed mid-write, a file that is no journal
// (left byte for byte as it was), a link, and a journal of another platform or profile.
import { spawnSync } from 'node:child_process';
import { lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatError, UsageError } from '../../../src/errors.js';
import { lineHash, openJournal } from '../../../src/batch/journal.js';
import { tempDirs } from '../../helpers/tmp.js';

const dirs = tempDirs('plat-journal-');
afterEach(() => dirs.cleanup());

const here = { origin: 'https://school.example.com', profile: 'default' };

async function opened(file: string, binding = here) {
  const journal = await openJournal(file, binding);
  await journal.startWriting();
  return journal;
}

describe('the batch journal', () => {
  it("records sent and done per id, durably, and a reopened journal knows each line's state and key", async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await opened(file);
    await Promise.all([journal.sent('s1', lineHash('a'), 'key-1'), journal.sent(2, lineHash('b')), journal.sent('s3', lineHash('c'), 'key-3')]);
    await journal.done('s1', { ok: true, status: 201 });
    await journal.done(2, { ok: false, status: 500 });
    await journal.close();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).split('\n')[0]).toBe('{"plat-batch-journal":2,"origin":"https://school.example.com","profile":"default"}');
    const again = await openJournal(file, here);
    expect(again.prior('s1')).toEqual({ hash: lineHash('a'), inFlight: false, ok: true, status: 201, key: 'key-1' });
    expect(again.prior(2)).toMatchObject({ inFlight: false, ok: false, status: 500 });
    expect(again.prior('2')).toMatchObject({ inFlight: false, ok: false, status: 500 });
    expect(again.prior('s3')).toEqual({ hash: lineHash('c'), inFlight: true, key: 'key-3' });
    expect(again.prior('s4')).toBeUndefined();
    await again.close();
  });

  it('a line sent again without a key keeps the key an earlier run sent the same text with', async () => {
    const file = path.join(await dirs.make(), 'j');
    const first = await opened(file);
    await first.sent(1, lineHash('a'), 'key-1');
    await first.close();
    const second = await opened(file);
    await second.sent(1, lineHash('a'));
    await second.close();
    const third = await opened(file);
    expect(third.prior(1)?.key).toBe('key-1');
    await third.sent(1, lineHash('changed'));
    await third.close();
    expect((await openJournal(file, here)).prior(1)?.key).toBeUndefined();
  });

  it('nothing is written before startWriting: a --check run leaves no file behind', async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await openJournal(file, here);
    await journal.close();
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);
  });

  it('a torn last record (killed mid-write) is ignored and cut off; a bad record before others means it is no journal', async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await opened(file);
    await journal.sent(1, lineHash('a'));
    await journal.close();
    await writeFile(file, `${await readFile(file, 'utf8')}{"id":1,"ok":tr`);
    const torn = await opened(file);
    expect(torn.prior(1)?.inFlight).toBe(true);
    // The next run's records start on a line of their own: the torn one is cut off, not continued.
    await torn.done(1, { ok: true, status: 200 });
    await torn.close();
    const resumed = await openJournal(file, here);
    expect(resumed.prior(1)).toMatchObject({ inFlight: false, ok: true });
    await resumed.close();
    await writeFile(file, `${await readFile(file, 'utf8')}{"id":1,"ok":tr\n{"id":1,"ok":true,"status":200}\n`);
    await expect(openJournal(file, here)).rejects.toThrow(/is not a plat batch journal \(line 4/);
  });

  it('a torn last record after CRLF line ends (a journal edited on another system) is cut off exactly, the records before it whole', async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await opened(file);
    await journal.sent(1, lineHash('a'));
    await journal.sent(2, lineHash('b'));
    await journal.close();
    await writeFile(file, `${(await readFile(file, 'utf8')).replaceAll('\n', '\r\n')}{"id":3,"ok":tr`);
    const torn = await opened(file);
    await torn.done(1, { ok: true, status: 200 });
    await torn.close();
    const resumed = await openJournal(file, here);
    expect(resumed.prior(1)).toMatchObject({ inFlight: false, ok: true });
    expect(resumed.prior(2)).toMatchObject({ inFlight: true });
    await resumed.close();
  });

  it('a file that is not a journal is refused and keeps every byte, whatever its last line', async () => {
    const dir = await dirs.make();
    for (const text of ['{"hello":1}\n', 'notes: buy milk', 'line one\nline two without an end', `{"plat-batch-journal":2,"origin":"${here.origin}","profile":"default"}\nnot a record\n`]) {
      const file = path.join(dir, 'notes.txt');
      await writeFile(file, text);
      const error = await openJournal(file, here).then(() => undefined, (e: unknown) => e);
      expect(error, text).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(/is not a plat batch journal \(line \d+ is not one of its records\); nothing was written to it or sent/);
      expect(await readFile(file, 'utf8')).toBe(text);
    }
  });

  it("a record's hash that plat did not write makes it no journal", async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await opened(file);
    await journal.sent('s1', lineHash('a'));
    await journal.close();
    await writeFile(file, (await readFile(file, 'utf8')).replace(lineHash('a'), 'not-a-hash'));
    await expect(openJournal(file, here)).rejects.toThrow(/the hash of line 2 is not one plat writes/);
  });

  it('a journal of another platform or profile is refused, naming both', async () => {
    const file = path.join(await dirs.make(), 'j');
    await (await opened(file)).close();
    await expect(openJournal(file, { origin: 'https://other.example.com', profile: 'default' })).rejects.toThrow(
      /records a run against https:\/\/school\.example\.com \(profile default\); this run is against https:\/\/other\.example\.com \(profile default\)\. Nothing was sent/,
    );
    await expect(openJournal(file, { ...here, profile: 'work' })).rejects.toThrow(UsageError);
    await expect(openJournal(file, { ...here, profile: null })).rejects.toThrow(UsageError);
    // A journal an earlier plat wrote records no platform: refused, with what to do.
    await writeFile(file, '{"plat-batch-journal":1}\n');
    await expect(openJournal(file, here)).rejects.toThrow(/written by an earlier plat/);
  });

  it('a link is refused by name, and the file it points to keeps every byte', async () => {
    const dir = await dirs.make();
    const target = path.join(dir, 'precious.txt');
    await writeFile(target, 'precious\nbytes');
    const link = path.join(dir, 'j');
    await symlink(target, link);
    const error = await openJournal(link, here).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`The journal ${link} is a symbolic link: plat writes a journal only to the file named, never through a link. Give --journal the file itself, or a new file.`);
    expect(await readFile(target, 'utf8')).toBe('precious\nbytes');
    // A dangling link too: nothing is created where it points.
    const dangling = path.join(dir, 'dangling');
    await symlink(path.join(dir, 'made-by-plat'), dangling);
    await expect(openJournal(dangling, here)).rejects.toThrow(UsageError);
    await expect(lstat(path.join(dir, 'made-by-plat'))).rejects.toThrow(/ENOENT/);
    // A FIFO (or any file that is not a regular one) is no journal either: opening it would wait for a writer.
    const fifo = path.join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(openJournal(fifo, here)).rejects.toThrow(`The journal ${fifo} is not a regular file.`);
  });

  it("a journal that cannot be opened or written says so, with the system's error code", async () => {
    const missing = path.join(await dirs.make(), 'no such dir', 'j');
    const journal = await openJournal(missing, here);
    await expect(journal.startWriting()).rejects.toThrow(`Cannot write the journal ${missing}: ENOENT.`);
    // A directory named as the journal: plat's sentence (a PlatError, exit 1), not an untranslated EISDIR.
    const directory = await dirs.make();
    const refused = await openJournal(directory, here).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(PlatError);
    expect((refused as Error).message).toBe(`Cannot read the journal ${directory}: EISDIR.`);
    // A write that fails after the journal opened (here the file is closed under it) rejects the record waiting on it.
    const file = path.join(await dirs.make(), 'j');
    const open = await opened(file);
    await open.close();
    const failed = await open.sent(1, lineHash('a')).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(PlatError);
    expect((failed as Error).message).toBe(`Cannot write the journal ${file}: EBADF.`);
  });
});
