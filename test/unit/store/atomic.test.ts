import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatError } from '../../../src/errors.js';
import { ensurePrivateDir, readJsonFile, writeFileAtomic } from '../../../src/store/atomic.js';
import { tempDirs } from '../../helpers/tmp.js';

const tmp = tempDirs('plat-atomic-');
afterEach(() => tmp.cleanup());

const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

describe.skipIf(process.platform === 'win32')('ensurePrivateDir', () => {
  it('creates missing directories 0700, whatever the umask', async () => {
    const root = await tmp.make();
    const dir = path.join(root, 'a', 'b');
    const previous = process.umask(0o077);
    try {
      await ensurePrivateDir(dir);
    } finally {
      process.umask(previous);
    }
    expect(await modeOf(dir)).toBe(0o700);
    await ensurePrivateDir(dir); // idempotent
  });

  it('leaves an existing directory as its owner set it', async () => {
    const root = await tmp.make();
    const dir = path.join(root, 'shared');
    await mkdir(dir, { mode: 0o755 });
    await ensurePrivateDir(dir);
    expect(await modeOf(dir)).toBe(0o755);
  });

  it('reports a directory it cannot create as a PlatError that names it and says what to do', async () => {
    const root = await tmp.make();
    await writeFile(path.join(root, 'file'), 'x');
    const dir = path.join(root, 'file', 'plat');
    const error = await ensurePrivateDir(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).exitCode).toBe(1);
    expect((error as PlatError).message).toContain(dir);
    expect((error as PlatError).message).toMatch(/PLAT_CONFIG_DIR/);
  });
});

describe('writeFileAtomic', () => {
  it('writes a 0600 file and leaves no temporary file behind', async () => {
    const dir = await tmp.make();
    const file = path.join(dir, 'x.json');
    await writeFileAtomic(file, '{"a":1}');
    expect(await readFile(file, 'utf8')).toBe('{"a":1}');
    if (process.platform !== 'win32') expect(await modeOf(file)).toBe(0o600);
    expect(await readdir(dir)).toEqual(['x.json']);
  });

  it('replaces the whole file, and resets a loosened mode', async () => {
    const dir = await tmp.make();
    const file = path.join(dir, 'x.json');
    await writeFile(file, 'old content that is longer than the new one', { mode: 0o644 });
    await writeFileAtomic(file, 'new');
    expect(await readFile(file, 'utf8')).toBe('new');
    if (process.platform !== 'win32') expect(await modeOf(file)).toBe(0o600);
  });

  it('never lets a concurrent reader see a partial file', async () => {
    const dir = await tmp.make();
    const file = path.join(dir, 'big.json');
    const versions = [0, 1, 2, 3, 4, 5].map((n) => JSON.stringify({ n, pad: String(n).repeat(256 * 1024) }));
    await writeFileAtomic(file, versions[0]!);
    let stop = false;
    const seen = new Set<number>();
    const reader = (async () => {
      while (!stop) {
        const parsed = JSON.parse(await readFile(file, 'utf8')) as { n: number; pad: string };
        expect(parsed.pad).toBe(String(parsed.n).repeat(256 * 1024));
        seen.add(parsed.n);
      }
    })();
    for (const version of versions.slice(1)) await writeFileAtomic(file, version);
    stop = true;
    await reader;
    expect(seen.size).toBeGreaterThan(0);
    expect(await readdir(dir)).toEqual(['big.json']);
  });

  it('fails with a PlatError naming the file when the directory is missing, and leaves nothing behind', async () => {
    const dir = await tmp.make();
    const file = path.join(dir, 'missing', 'x.json');
    const error = await writeFileAtomic(file, 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).message).toContain(file);
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes its temporary file when the rename fails', async () => {
    const dir = await tmp.make();
    const target = path.join(dir, 'target');
    await mkdir(path.join(target, 'child'), { recursive: true }); // renaming a file over a non-empty dir fails
    const error = await writeFileAtomic(target, 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect(await readdir(dir)).toEqual(['target']);
  });
});

describe('readJsonFile', () => {
  it('returns undefined for a missing file', async () => {
    const dir = await tmp.make();
    expect(await readJsonFile(path.join(dir, 'nope.json'))).toBeUndefined();
  });

  it('parses a valid file', async () => {
    const dir = await tmp.make();
    await writeFile(path.join(dir, 'ok.json'), '{"a":[1,2]}');
    expect(await readJsonFile(path.join(dir, 'ok.json'))).toEqual({ a: [1, 2] });
  });

  it.each([
    ['truncated', '{"accessToken":"at-very-secret-tok', 'is not valid JSON'],
    ['empty', '', 'is empty'],
  ])('names a %s file and the fix, without quoting its content', async (_, content, what) => {
    const dir = await tmp.make();
    const file = path.join(dir, 'bad.json');
    await writeFile(file, content);
    const error = await readJsonFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    const { message, exitCode, cause } = error as PlatError;
    expect(exitCode).toBe(1);
    expect(message).toContain(file);
    expect(message).toContain(what);
    expect(message).toMatch(/Delete it or run `plat login` again\./);
    expect(message).not.toContain('secret');
    expect(String(cause ?? '')).not.toContain('secret');
  });

  describe('of a file that is missing more often than not (oftenMissing: looked for before it is read)', () => {
    it('is undefined when missing, and parsed when there', async () => {
      const dir = await tmp.make();
      expect(await readJsonFile(path.join(dir, 'nope.json'), { oftenMissing: true })).toBeUndefined();
      expect(await readJsonFile(path.join(dir, 'gone', 'nope.json'), { oftenMissing: true })).toBeUndefined();
      await writeFile(path.join(dir, 'ok.json'), '{"a":[1,2]}');
      expect(await readJsonFile(path.join(dir, 'ok.json'), { oftenMissing: true })).toEqual({ a: [1, 2] });
    });

    it('fails as any read does for something there that is no file, or no JSON', async () => {
      const dir = await tmp.make();
      await mkdir(path.join(dir, 'a-dir.json'));
      const unreadable = await readJsonFile(path.join(dir, 'a-dir.json'), { oftenMissing: true }).catch((e: unknown) => e);
      expect(unreadable).toBeInstanceOf(PlatError);
      expect((unreadable as PlatError).message).toContain(path.join(dir, 'a-dir.json'));
      expect((unreadable as PlatError).message).toContain('it is a directory');
      await writeFile(path.join(dir, 'bad.json'), '{"a":');
      const damaged = await readJsonFile(path.join(dir, 'bad.json'), { oftenMissing: true }).catch((e: unknown) => e);
      expect((damaged as PlatError).message).toContain('is not valid JSON');
    });
  });
});
