// plat batch --journal for real data, through the built CLI against the reference platform: fix failed lines and
// rerun (exactly the fixed lines sent, by the server's own count), a done line changed since not sent again, each
// choice for lines left unknown by kill -9, and the journal as untrusted input (a link, a file that is no journal,
// another platform's journal, a tampered hash: each refused with nothing sent).
import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledger, ndjson, results, runUntilKilled } from '../helpers/batch.js';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

async function loggedIn() {
  const result = await home.login(platform, ['--scope', 'courses:read courses:write']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

const apiRequests = () => platform.stats.events.filter((e) => e.path.startsWith('/api/') && !e.path.startsWith('/api/oauth/'));
const enrol = (students: number[]) => ndjson(students.map((student, i) => ({ id: `s${i + 1}`, method: 'POST', path: '/api/ledger', body: { student } })));
/** Lines the journal records (sent, with or without an outcome). */
async function recorded(journal: string): Promise<number> {
  return new Set((await readFile(journal, 'utf8')).trim().split('\n').slice(1).map((text) => String((JSON.parse(text) as { id: string }).id))).size;
}

/** Lines of the journal that say "sent" with no outcome after them: the unknown ones. */
async function unknownIds(journal: string): Promise<string[]> {
  const state = new Map<string, boolean>();
  for (const text of (await readFile(journal, 'utf8')).trim().split('\n').slice(1)) {
    const record = JSON.parse(text) as { id: string; sent?: boolean };
    state.set(String(record.id), record.sent === true);
  }
  return [...state].filter(([, inFlight]) => inFlight).map(([id]) => id);
}

describe('plat batch: fix and rerun', () => {
  it('two of 20 lines fail; --failed writes them back; the fixed file rerun with the journal sends exactly those two', async () => {
    await loggedIn();
    // Students 7 and 13 are typed wrong (negative): the server refuses them and creates nothing.
    const students = Array.from({ length: 20 }, (_, i) => (i === 6 || i === 12 ? -(i + 1) : i + 1));
    const book = ledger(platform, { refuse: (student) => student < 0 });
    const file = path.join(home.dir, 'enrol.ndjson');
    const journal = path.join(home.dir, 'enrol.journal');
    const failed = path.join(home.dir, 'fix.ndjson');
    await writeFile(file, enrol(students));

    const first = await home.run(['batch', file, '--journal', journal, '--failed', failed, '--concurrency', '4']);
    expect(first.code).toBe(1);
    expectCleanError(first);
    expect(first.stderr).toMatch(/20 lines: 18 succeeded, 2 failed in/);
    expect(first.stderr).toMatch(/Failed: (s7, s13|s13, s7)\./);
    expect(first.stderr).toContain(`${failed} holds those lines: fix them and run plat batch ${failed} --journal ${journal}`);
    expect(book.total()).toBe(20);
    const written = (await readFile(failed, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { id: string; body: { student: number } });
    expect(written.map((l) => l.id).sort()).toEqual(['s13', 's7']);

    // Fixed as a person would: the student numbers corrected in the file plat wrote.
    await writeFile(failed, (await readFile(failed, 'utf8')).replace('-7', '7').replace('-13', '13'));
    const rerun = await home.run(['batch', failed, '--journal', journal]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/2 lines: 2 succeeded, 0 failed in/);
    expect(book.total(), 'requests the server received').toBe(22);
    expect([...book.counts.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect([...book.counts.values()].every((n) => n === 1)).toBe(true);

    // The original file again, its two lines still wrong: every line is done, so nothing is sent; the two whose text
    // differs from what was sent are named, not sent.
    const again = await home.run(['batch', file, '--journal', journal]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/2 lines done in an earlier run have changed since, and are not sent again: s7, s13\./);
    expect(again.stderr).toMatch(/20 lines: 0 succeeded, 0 failed, 20 skipped \(done in an earlier run\)/);
    expect(book.total()).toBe(22);
  });

  it('a failed line fixed in place in the original file is sent; the lines done are not, whatever their text', async () => {
    await loggedIn();
    const book = ledger(platform, { refuse: (student) => student < 0 });
    const file = path.join(home.dir, 'enrol.ndjson');
    const journal = path.join(home.dir, 'enrol.journal');
    await writeFile(file, ndjson([{ method: 'POST', path: '/api/ledger', body: { student: 1 } }, { method: 'POST', path: '/api/ledger', body: { student: -2 } }]));
    expect((await home.run(['batch', file, '--journal', journal])).code).toBe(1);
    // Lines without an id are keyed by their number: line 2 fixed, line 1 reworded (spaces), neither re-typed.
    await writeFile(file, `{ "method": "POST", "path": "/api/ledger", "body": { "student": 1 } }\n${JSON.stringify({ method: 'POST', path: '/api/ledger', body: { student: 2 } })}\n`);
    const rerun = await home.run(['batch', file, '--journal', journal]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).not.toMatch(/changed since/);
    expect(results(rerun).map((r) => r.line)).toEqual([2]);
    expect(book.total()).toBe(3);
    expect(book.counts).toEqual(new Map([[1, 1], [2, 1]]));
  });
});

describe('plat batch: lines unknown after kill -9', () => {
  const students = 60;
  const input = enrol(Array.from({ length: students }, (_, i) => i + 1));

  async function killed() {
    await loggedIn();
    const file = path.join(home.dir, 'enrol.ndjson');
    const journal = path.join(home.dir, 'enrol.journal');
    await writeFile(file, input);
    const kill: { onKill?: () => void } = {};
    const book = ledger(platform, { onArrival: (n) => n === 25 && kill.onKill?.() });
    const args = ['batch', file, '--journal', journal, '--concurrency', '8'];
    expect((await runUntilKilled(home, args, kill)).signal).toBe('SIGKILL');
    const unknown = await unknownIds(journal);
    expect(unknown.length, 'lines in flight at the kill').toBeGreaterThan(0);
    // Lines the first run never sent: every rerun sends these, and only a choice adds the unknown ones.
    const neverSent = students - (await recorded(journal));
    return { book, args, unknown, journal, neverSent };
  }

  it('no choice: the unknown lines are held and named (exit 1), the rest sent; never sent twice', async () => {
    const { book, args, unknown, neverSent, journal } = await killed();
    const before = book.total();
    // --check says what a rerun would do, and writes nothing to the journal.
    const bytes = await readFile(journal, 'utf8');
    const check = await home.run([...args, '--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toContain(`${unknown.length} unknown held (--resend-unknown or --settle-unknown decides)`);
    expect(await readFile(journal, 'utf8')).toBe(bytes);
    expect(book.total()).toBe(before);
    const rerun = await home.run(args, { timeoutMs: 60_000 });
    expect(rerun.code).toBe(1);
    expectCleanError(rerun);
    const held = results(rerun).filter((r) => r.status === null);
    expect(held.map((r) => String(r.id)).sort()).toEqual([...unknown].sort());
    for (const r of held) expect(r.error).toMatch(/--settle-unknown done \(it happened\) or --resend-unknown \(it did not\)/);
    expect(rerun.stderr).toMatch(new RegExp(`${students} lines: \\d+ succeeded, 0 failed, ${unknown.length} unknown, \\d+ skipped`));
    expect(rerun.stderr).toMatch(/Unknown: s\d+/);
    // Sent: exactly the lines the first run never reached.
    expect(book.total() - before).toBe(neverSent);
    expect([...book.counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('--settle-unknown done: recorded as done, nothing sent for them, exit 0; later reruns skip them', async () => {
    const { book, args, unknown, neverSent } = await killed();
    const before = book.total();
    const rerun = await home.run([...args, '--settle-unknown', 'done'], { timeoutMs: 60_000 });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain(`${unknown.length} unknown line${unknown.length === 1 ? ' was' : 's were'} settled as done (--settle-unknown done)`);
    expect(results(rerun).some((r) => unknown.includes(String(r.id)))).toBe(false);
    expect(book.total() - before).toBe(neverSent);
    const later = await home.run(args);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stderr).toMatch(new RegExp(`${students} skipped`));
  });

  it('--settle-unknown failed: recorded as failed, not sent, listed in --failed; that file rerun sends them once', async () => {
    const { book, args, unknown, journal, neverSent } = await killed();
    const before = book.total();
    const failed = path.join(home.dir, 'unknown.ndjson');
    const rerun = await home.run([...args, '--settle-unknown', 'failed', '--failed', failed], { timeoutMs: 60_000 });
    expect(rerun.code).toBe(1);
    expect(rerun.stderr).toContain('settled as failed (--settle-unknown failed)');
    expect(book.total() - before).toBe(neverSent);
    const lines = (await readFile(failed, 'utf8')).trim().split('\n').map((l) => String((JSON.parse(l) as { id: string }).id));
    expect(lines.sort()).toEqual([...unknown].sort());
    const sentBefore = book.total();
    const fix = await home.run(['batch', failed, '--journal', journal]);
    expect(fix.code, fix.stderr).toBe(0);
    expect(book.total() - sentBefore).toBe(unknown.length);
  });

  it('--resend-unknown: exactly the unknown lines are sent again, on the person\'s word', async () => {
    const { book, args, unknown, neverSent } = await killed();
    const before = book.total();
    const rerun = await home.run([...args, '--resend-unknown'], { timeoutMs: 60_000 });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain(`${unknown.length} unknown line${unknown.length === 1 ? ' was' : 's were'} sent again, as --resend-unknown asked`);
    expect(book.total() - before).toBe(neverSent + unknown.length);
    const both = await home.run([...args, '--resend-unknown', '--settle-unknown', 'done']);
    expect(both.code).toBe(2);
    expectCleanError(both);
  });
});

describe('plat batch: a POST with no answer', () => {
  it('a connection cut before the answer leaves a POST without a key unknown, not failed: a rerun does not send it', async () => {
    await loggedIn();
    let arrived = 0;
    // The server takes the request (it may have acted) and the connection drops before any answer.
    platform.override('/api/ledger', async (req) => {
      arrived++;
      req.resume();
      req.socket.destroy();
      return true;
    });
    const file = path.join(home.dir, 'in.ndjson');
    const journal = path.join(home.dir, 'in.journal');
    await writeFile(file, enrol([1]));
    const first = await home.run(['batch', file, '--journal', journal]);
    expect(first.code).toBe(1);
    expectCleanError(first);
    expect(results(first)[0]).toMatchObject({ id: 's1', status: null, ok: false });
    expect(results(first)[0]!.error).toMatch(/^unknown: no answer came \(.+\), but the request may have reached the server and been acted on/);
    expect(first.stderr).toMatch(/1 line: 0 succeeded, 0 failed, 1 unknown in/);
    expect(first.stderr).toMatch(/Unknown: s1\./);
    const sent = arrived;
    const rerun = await home.run(['batch', file, '--journal', journal]);
    expect(rerun.code).toBe(1);
    expect(results(rerun)[0]!.error).toMatch(/^unknown: line 1 \(POST\) was in flight/);
    expect(arrived, 'requests the server received').toBe(sent);
  });
});

describe('plat batch: the journal is untrusted input', () => {
  it('a journal that is a symbolic link: exit 2 naming it, nothing sent, the file it points to unchanged', async () => {
    await loggedIn();
    const target = path.join(home.dir, 'thesis.txt');
    await writeFile(target, 'chapter one\nchapter two');
    const link = path.join(home.dir, 'enrol.journal');
    await symlink(target, link);
    const file = path.join(home.dir, 'in.ndjson');
    await writeFile(file, ndjson([{ method: 'GET', path: '/api/courses' }]));
    const result = await home.run(['batch', file, '--journal', link]);
    expect(result.code).toBe(2);
    expectCleanError(result);
    expect(result.stderr).toContain(`The journal ${link} is a symbolic link`);
    expect(await readFile(target, 'utf8')).toBe('chapter one\nchapter two');
    expect(apiRequests()).toEqual([]);
  });

  it('a file that is not a journal: exit 2, nothing sent, its bytes unchanged', async () => {
    await loggedIn();
    const notes = path.join(home.dir, 'notes.txt');
    const bytes = 'meeting notes\nlast line without an end';
    await writeFile(notes, bytes);
    const file = path.join(home.dir, 'in.ndjson');
    await writeFile(file, ndjson([{ method: 'GET', path: '/api/courses' }]));
    const result = await home.run(['batch', file, '--journal', notes]);
    expect(result.code).toBe(2);
    expectCleanError(result);
    expect(result.stderr).toMatch(/is not a plat batch journal/);
    expect(await readFile(notes, 'utf8')).toBe(bytes);
    expect(apiRequests()).toEqual([]);
  });

  it("another platform's journal is refused before anything is sent (zero requests received)", async () => {
    await loggedIn();
    const token = (await home.run(['token'])).stdout.trim();
    expect(new URL(platform.baseUrl).hostname).toBe('127.0.0.1');
    const file = path.join(home.dir, 'in.ndjson');
    const journal = path.join(home.dir, 'in.journal');
    await writeFile(file, ndjson([{ id: 'a', method: 'POST', path: '/api/courses', body: { title: 'Algebra' } }]));
    const port = new URL(platform.baseUrl).port;
    const first = await home.run(['batch', file, '--journal', journal, '--base-url', `http://127.0.0.1:${port}`], { env: { PLAT_TOKEN: token } });
    expect(first.code, first.stderr).toBe(0);
    platform.stats.reset();
    // The same lines against another origin (here another name for the same server, so its log sees what arrives).
    const other = await home.run(['batch', file, '--journal', journal, '--base-url', `http://localhost:${port}`], { env: { PLAT_TOKEN: token } });
    expect(other.code).toBe(2);
    expectCleanError(other);
    expect(other.stderr).toContain(`records a run against http://127.0.0.1:${port}; this run is against http://localhost:${port}. Nothing was sent.`);
    expect(apiRequests()).toEqual([]);
  });

  it('a record whose hash plat did not write: exit 2 before the first request', async () => {
    await loggedIn();
    const book = ledger(platform, { refuse: (student) => student < 3 });
    const file = path.join(home.dir, 'in.ndjson');
    const journal = path.join(home.dir, 'in.journal');
    await writeFile(file, enrol([1, 2, 3, 4, 5]));
    expect((await home.run(['batch', file, '--journal', journal, '--concurrency', '1'])).code).toBe(1);
    const before = book.total();
    // Lines 1 and 2 failed (a rerun would send them first); line 5's record is tampered with.
    const text = await readFile(journal, 'utf8');
    const records = text.trim().split('\n');
    const fifth = records.findIndex((r) => r.includes('"id":"s5"') && r.includes('"sent":true'));
    records[fifth] = records[fifth]!.replace(/"hash":"[0-9a-f]+"/, '"hash":"0000-tampered"');
    await writeFile(journal, `${records.join('\n')}\n`);
    const rerun = await home.run(['batch', file, '--journal', journal, '--concurrency', '1']);
    expect(rerun.code).toBe(2);
    expectCleanError(rerun);
    expect(rerun.stderr).toMatch(/is not a plat batch journal \(the hash of line \d+ is not one plat writes\)/);
    expect(book.total()).toBe(before);
  });
});
