import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatError, UsageError } from '../../../src/errors.js';
import { FileTokenStore } from '../../../src/store/file-store.js';
import { sampleSession } from '../../helpers/sessions.js';
import { tempDirs } from '../../helpers/tmp.js';

const tmp = tempDirs('plat-filestore-');
afterEach(() => tmp.cleanup());

const unix = process.platform !== 'win32';
const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

describe('FileTokenStore', () => {
  it('describes itself as the file store in the tokens dir', async () => {
    const config = await tmp.make();
    const store = new FileTokenStore(config);
    expect(store.kind).toBe('file');
    expect(store.location).toBe(path.join(config, 'tokens'));
    expect(store.pathOf('work')).toBe(path.join(config, 'tokens', 'work.json'));
  });

  it('returns undefined for a profile with no session (and creates nothing)', async () => {
    const config = await tmp.make();
    expect(await new FileTokenStore(config).get('default')).toBeUndefined();
    expect(await readdir(config)).toEqual([]);
  });

  it('round-trips a session through a 0600 file in a 0700 directory', async () => {
    const config = path.join(await tmp.make(), 'plat');
    const store = new FileTokenStore(config);
    const session = sampleSession({ clientSecret: 's3cr3t', scopes: ['openid', 'read:ü'] });
    await store.set('default', session);
    expect(await store.get('default')).toEqual(session);
    if (unix) {
      expect(await modeOf(config)).toBe(0o700);
      expect(await modeOf(store.location)).toBe(0o700);
      expect(await modeOf(store.pathOf('default'))).toBe(0o600);
    }
  });

  it('replaces the session atomically, leaving one file and no temporary files', async () => {
    const config = await tmp.make();
    const store = new FileTokenStore(config);
    await store.set('default', sampleSession({ accessToken: 'first' }));
    const second = sampleSession({ accessToken: 'second', refreshToken: undefined });
    await store.set('default', second);
    expect(await store.get('default')).toEqual(JSON.parse(JSON.stringify(second)));
    expect(await readdir(store.location)).toEqual(['default.json']);
  });

  it('keeps profiles apart', async () => {
    const store = new FileTokenStore(await tmp.make());
    await store.set('a', sampleSession({ accessToken: 'A' }));
    await store.set('b', sampleSession({ accessToken: 'B' }));
    expect((await store.get('a'))?.accessToken).toBe('A');
    expect((await store.get('b'))?.accessToken).toBe('B');
    await store.delete('a');
    expect(await store.get('a')).toBeUndefined();
    expect((await store.get('b'))?.accessToken).toBe('B');
  });

  it('deletes, and deleting what is not there is not an error', async () => {
    const store = new FileTokenStore(await tmp.make());
    await store.delete('never-stored');
    await store.set('default', sampleSession());
    await store.delete('default');
    await store.delete('default');
    expect(await store.get('default')).toBeUndefined();
  });

  it.skipIf(!unix)('still reads a file whose mode was loosened, and tightens it back to 0600', async () => {
    const store = new FileTokenStore(await tmp.make());
    const session = sampleSession();
    await store.set('default', session);
    await chmod(store.pathOf('default'), 0o644);
    expect(await store.get('default')).toEqual(session);
    expect(await modeOf(store.pathOf('default'))).toBe(0o600);
  });

  it('reports a truncated file by name with the fix, never quoting the token', async () => {
    const store = new FileTokenStore(await tmp.make());
    await mkdir(store.location, { recursive: true });
    await writeFile(store.pathOf('default'), '{"accessToken":"at-leaky-secret","tokenTy');
    const error = await store.get('default').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).exitCode).toBe(1);
    expect((error as PlatError).message).toContain(store.pathOf('default'));
    expect((error as PlatError).message).toMatch(/Delete it or run `plat login` again/);
    expect((error as PlatError).message).not.toContain('leaky');
  });

  it('reports valid JSON that is not a session', async () => {
    const store = new FileTokenStore(await tmp.make());
    await mkdir(store.location, { recursive: true });
    await writeFile(store.pathOf('default'), '{"hello":"world"}');
    const error = await store.get('default').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).message).toMatch(/does not hold a plat session.*plat login/);
  });

  it('refuses profile names that would escape the tokens dir', async () => {
    const config = await tmp.make();
    const store = new FileTokenStore(config);
    await expect(store.set('../escape', sampleSession())).rejects.toBeInstanceOf(UsageError);
    await expect(store.get('../../etc/passwd')).rejects.toBeInstanceOf(UsageError);
    expect(await readdir(config)).toEqual([]);
  });

  it('works in a config dir whose path has spaces', async () => {
    const config = path.join(await tmp.make(), 'My Config', 'plat dir');
    const store = new FileTokenStore(config);
    await store.set('default', sampleSession({ accessToken: 'spaced' }));
    expect((await store.get('default'))?.accessToken).toBe('spaced');
    expect(JSON.parse(await readFile(store.pathOf('default'), 'utf8')).accessToken).toBe('spaced');
  });

  it('turns an unwritable config dir into a PlatError that says what to do', async () => {
    const root = await tmp.make();
    await writeFile(path.join(root, 'not-a-dir'), '');
    const store = new FileTokenStore(path.join(root, 'not-a-dir', 'plat'));
    const error = await store.set('default', sampleSession()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).exitCode).toBe(1);
    expect((error as PlatError).message).toMatch(/not-a-dir.*PLAT_CONFIG_DIR/s);
  });
});
