// plat batch's journal (src/session/batch-journal.ts) read back as a rerun reads it: what succeeded, what was in
// flight (with its Idempotency-Key), a torn last record from a process killed mid-write, and a file that is no journal.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatError, UsageError } from '../../../src/errors.js';
import { lineHash, openJournal } from '../../../src/session/batch-journal.js';
import { tempDirs } from '../../helpers/tmp.js';

const dirs = tempDirs('plat-journal-');
afterEach(() => dirs.cleanup());

describe('the batch journal', () => {
  it('records sent and done per line, durably, and a reopened journal knows each line\'s state and key', async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await openJournal(file);
    await Promise.all([journal.sent(1, lineHash('a'), 'key-1'), journal.sent(2, lineHash('b')), journal.sent(3, lineHash('c'), 'key-3')]);
    await journal.done(1, { ok: true, status: 201 });
    await journal.done(2, { ok: false, status: 500 });
    await journal.close();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await openJournal(file);
    expect(again.prior(1)).toEqual({ hash: lineHash('a'), inFlight: false, ok: true, status: 201, key: 'key-1' });
    expect(again.prior(2)).toMatchObject({ inFlight: false, ok: false, status: 500 });
    expect(again.prior(3)).toEqual({ hash: lineHash('c'), inFlight: true, key: 'key-3' });
    expect(again.prior(4)).toBeUndefined();
    await again.close();
  });

  it('a line sent again without a key keeps the key an earlier run sent it with', async () => {
    const file = path.join(await dirs.make(), 'j');
    const first = await openJournal(file);
    await first.sent(1, lineHash('a'), 'key-1');
    await first.close();
    const second = await openJournal(file);
    await second.sent(1, lineHash('a'));
    await second.close();
    const third = await openJournal(file);
    expect(third.prior(1)?.key).toBe('key-1');
    await third.close();
  });

  it('a torn last record (killed mid-write) is ignored; torn records before others mean it is no journal', async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await openJournal(file);
    await journal.sent(1, lineHash('a'));
    await journal.close();
    await writeFile(file, `${await readFile(file, 'utf8')}{"line":1,"ok":tr`);
    const torn = await openJournal(file);
    expect(torn.prior(1)?.inFlight).toBe(true);
    // The next run's records start on a line of their own: the torn one is cut off, not continued.
    await torn.done(1, { ok: true, status: 200 });
    await torn.close();
    const resumed = await openJournal(file);
    expect(resumed.prior(1)).toMatchObject({ inFlight: false, ok: true });
    await resumed.close();
    await writeFile(file, `${await readFile(file, 'utf8')}{"line":1,"ok":tr`);
    await writeFile(file, `${await readFile(file, 'utf8')}\n{"line":1,"ok":true,"status":200}\n`);
    await expect(openJournal(file)).rejects.toThrow(/is not a plat batch journal \(line 4/);
    const other = path.join(await dirs.make(), 'notes.txt');
    await writeFile(other, '{"hello":1}\n');
    await expect(openJournal(other)).rejects.toThrow(/not a plat batch journal \(line 1/);
  });

  it('a torn last record longer than any record (64 KiB without a line end) means it is no journal: a usage error, not a write failure', async () => {
    const file = path.join(await dirs.make(), 'j');
    const journal = await openJournal(file);
    await journal.close();
    await writeFile(file, `${await readFile(file, 'utf8')}${'x'.repeat(70 * 1024)}`);
    const error = await openJournal(file).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`${file} is not a plat batch journal (its last record is longer than a journal record can be). Give --journal a new file, or the one an earlier plat batch run wrote.`);
  });

  it('a journal that cannot be opened or written says so, with the system\'s error code', async () => {
    const missing = path.join(await dirs.make(), 'no such dir', 'j');
    await expect(openJournal(missing)).rejects.toThrow(`Cannot write the journal ${missing}: ENOENT.`);
    // A directory named as the journal: plat's sentence (a PlatError, exit 1), not an untranslated EISDIR.
    const directory = await dirs.make();
    const refused = await openJournal(directory).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(PlatError);
    expect((refused as Error).message).toBe(`Cannot read the journal ${directory}: EISDIR.`);
    // A write that fails after the journal opened (here the file is closed under it) rejects the record waiting on it.
    const file = path.join(await dirs.make(), 'j');
    const journal = await openJournal(file);
    await journal.close();
    const failed = await journal.sent(1, lineHash('a')).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(PlatError);
    expect((failed as Error).message).toBe(`Cannot write the journal ${file}: EBADF.`);
  });
});
