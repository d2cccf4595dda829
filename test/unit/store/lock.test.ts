import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatError } from '../../../src/errors.js';
import { withProfileLock } from '../../../src/store/lock.js';
import { bundleScript, nodeEnv } from '../../helpers/bundle.js';
import { tempDirs } from '../../helpers/tmp.js';
import { scaled } from '../../helpers/time.js';

const tmp = tempDirs('plat-lock-');
afterAll(() => tmp.cleanup());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('withProfileLock in one process', () => {
  it('returns what fn returns and removes the lock afterwards', async () => {
    const config = await tmp.make();
    expect(await withProfileLock(config, 'default', async () => 42)).toBe(42);
    expect(existsSync(path.join(config, 'locks', 'default.lock'))).toBe(false);
  });

  it('releases the lock when fn throws, and passes the error through', async () => {
    const config = await tmp.make();
    await expect(
      withProfileLock(config, 'default', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await withProfileLock(config, 'default', async () => 'again')).toBe('again');
  });

  it('lets only one holder in at a time', async () => {
    const config = await tmp.make();
    const events: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const holder = (id: string) =>
      withProfileLock(config, 'default', async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        events.push(`start ${id}`);
        await sleep(30);
        events.push(`end ${id}`);
        inside--;
        return id;
      });
    expect(await Promise.all([holder('a'), holder('b'), holder('c')])).toEqual(['a', 'b', 'c']);
    expect(maxInside).toBe(1);
    for (let i = 0; i < events.length; i += 2) {
      expect(events[i + 1]).toBe(events[i]!.replace('start', 'end'));
    }
  });

  it('does not make different profiles wait for each other', async () => {
    const config = await tmp.make();
    const order: string[] = [];
    await withProfileLock(config, 'one', async () => {
      await withProfileLock(config, 'two', async () => order.push('two'), { timeoutMs: 500 });
      order.push('one');
    });
    expect(order).toEqual(['two', 'one']);
  });

  it('gives up after the timeout with a message naming the profile and the lock', async () => {
    const config = await tmp.make();
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const held = withProfileLock(config, 'work', () =>
      new Promise<void>((resolve) => {
        release = resolve;
        entered();
      }),
    );
    await inside;
    const started = Date.now();
    const error = await withProfileLock(config, 'work', async () => 'never', { timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    const waited = Date.now() - started;
    release();
    await held;
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).exitCode).toBe(1);
    const lockPath = path.join(config, 'locks', 'work.lock');
    expect((error as PlatError).message).toBe(
      `Another plat process is holding the lock for profile work (${lockPath}); try again, ` +
        'or delete the lock if no plat is running.',
    );
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(scaled(2_000));
  });

  it('takes over a stale lock left behind (old mtime) without waiting for the timeout', async () => {
    const config = await tmp.make();
    const lockDir = path.join(config, 'locks', 'default.lock');
    await mkdir(lockDir, { recursive: true });
    const old = new Date(Date.now() - 60_000);
    await utimes(lockDir, old, old);
    const started = Date.now();
    expect(await withProfileLock(config, 'default', async () => 'mine', { timeoutMs: 5_000 })).toBe('mine');
    expect(Date.now() - started).toBeLessThan(scaled(1_000, { under: 5_000 }));
  });

  it('waits for a fresh lock instead of taking it over', async () => {
    const config = await tmp.make();
    await mkdir(path.join(config, 'locks', 'default.lock'), { recursive: true });
    await expect(withProfileLock(config, 'default', async () => 'x', { timeoutMs: 200 })).rejects.toThrow(
      /Another plat process is holding the lock/,
    );
  });

  it('fails the result (without an unhandled throw) when the lock is lost while held', async () => {
    const config = await tmp.make();
    const lockDir = path.join(config, 'locks', 'default.lock');
    let aborted = false;
    const error = await withProfileLock(
      config,
      'default',
      async (signal) => {
        const abort = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        void abort.then(() => (aborted = true));
        // Someone removes the lock: the next periodic update (every staleMs / 2 = 1 s) notices.
        const { rm } = await import('node:fs/promises');
        await rm(lockDir, { recursive: true });
        await abort;
        return 'done';
      },
      { staleMs: 2_000 },
    ).catch((e: unknown) => e);
    expect(aborted).toBe(true);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).message).toMatch(/plat lost the lock for profile default .* Try again\./);
  });
});

describe('withProfileLock across processes', () => {
  let script: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    const out = await tmp.make();
    const lockModule = path.resolve('src/store/lock.ts');
    script = await bundleScript(
      `
      import { appendFileSync, existsSync, readFileSync } from 'node:fs';
      import { withProfileLock } from ${JSON.stringify(lockModule)};
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      // How many times the lock has changed hands so far, read from the log.
      function switches(logFile: string): number {
        const holders = readFileSync(logFile, 'utf8').split('\\n').filter((l) => l.startsWith('start')).map((l) => l.split(' ')[1]);
        return holders.filter((h, i) => i > 0 && h !== holders[i - 1]).length;
      }
      async function main() {
        const [mode, configDir, arg1, arg2, arg3] = process.argv.slice(2);
        if (mode === 'append') {
          const [logFile, id, go] = [arg1!, arg2!, arg3!];
          process.stdout.write('ready\\n');
          while (!existsSync(go)) await sleep(5);
          // At least 15 turns each, and on until the lock has changed hands three times: on a busy machine one
          // process may not be scheduled at all while the other makes its 15, which proves nothing about the lock.
          for (let i = 0; i < 15 || (switches(logFile) < 3 && i < 1000); i++) {
            await withProfileLock(configDir!, 'shared', async () => {
              appendFileSync(logFile, 'start ' + id + ' ' + i + '\\n');
              await sleep(8);
              appendFileSync(logFile, 'end ' + id + ' ' + i + '\\n');
            }, { timeoutMs: 20000 });
            await sleep(20); // like separate plat runs: a gap in which the other process can get in
          }
        } else if (mode === 'hold') {
          await withProfileLock(configDir!, 'shared', async () => {
            process.stdout.write('locked\\n');
            setInterval(() => undefined, 1000); // stay alive (the lock's own timer is unref'd) until SIGKILL
            await new Promise(() => undefined);
          }, { staleMs: 2000 });
        }
      }
      main().catch((e) => { console.error(e); process.exit(1); });
      `,
      out,
      'lock-child',
    );
  });

  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  function run(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; stderr: string }> } {
    const child = spawn(process.execPath, [script, ...args], { env: nodeEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stderr })),
    );
    return { child, done };
  }

  it('two node processes never interleave their critical sections', async () => {
    const config = await tmp.make();
    const dir = await tmp.make();
    const log = path.join(dir, 'log.txt');
    const go = path.join(dir, 'go');
    const a = run(['append', config, log, 'A', go]);
    const b = run(['append', config, log, 'B', go]);
    // both children loaded and polling for the go file
    await Promise.all([a, b].map(({ child }) => new Promise<void>((resolve) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready\n')) resolve();
      });
    })));
    await writeFile(go, '');
    const results = await Promise.all([a.done, b.done]);
    expect(results.map((r) => r.code), results.map((r) => r.stderr).join('\n')).toEqual([0, 0]);

    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines.length % 2).toBe(0);
    for (const id of ['A', 'B']) expect(lines.filter((l) => l.startsWith(`start ${id} `)).length).toBeGreaterThanOrEqual(15);
    for (let i = 0; i < lines.length; i += 2) {
      // Every start is immediately followed by the end of the same holder and iteration: no interleaving.
      expect(lines[i + 1]).toBe(lines[i]!.replace('start', 'end'));
    }
    // Both processes really competed: the lock changed hands between them three times or more (they go on until it has).
    const holders = lines.filter((l) => l.startsWith('start')).map((l) => l.split(' ')[1]);
    const switches = holders.filter((h, i) => i > 0 && h !== holders[i - 1]).length;
    expect(switches).toBeGreaterThanOrEqual(3);
  });

  it('takes over the lock of a SIGKILLed process after the stale time', async () => {
    const config = await tmp.make();
    const holder = run(['hold', config]);
    await new Promise<void>((resolve, reject) => {
      holder.child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      holder.done.then(({ stderr }) => reject(new Error(`holder exited early: ${stderr}`)));
    });
    holder.child.kill('SIGKILL');
    await holder.done;
    expect(existsSync(path.join(config, 'locks', 'shared.lock'))).toBe(true); // SIGKILL: nothing cleaned up

    const started = Date.now();
    const result = await withProfileLock(config, 'shared', async () => 'taken over', {
      staleMs: 2_000,
      timeoutMs: 10_000,
    });
    expect(result).toBe('taken over');
    const waited = Date.now() - started;
    expect(waited).toBeLessThan(scaled(5_000, { under: 10_000 }));
  });
});
