import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatError, UsageError } from '../../../src/errors.js';
import { ProfileStore } from '../../../src/store/profiles.js';
import type { Profile } from '../../../src/store/types.js';
import { tempDirs } from '../../helpers/tmp.js';

const tmp = tempDirs('plat-profiles-');
afterEach(() => tmp.cleanup());

const unix = process.platform !== 'win32';
const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

function profile(name: string, extra: Partial<Profile> = {}): Profile {
  return {
    name,
    baseUrl: 'http://127.0.0.1:4000',
    issuer: 'http://127.0.0.1:4000',
    client: {
      clientId: 'cli-123',
      authMethod: 'none',
      issuer: 'http://127.0.0.1:4000',
      redirectUris: ['http://127.0.0.1/callback'],
      dynamic: true,
      registeredAt: 1,
    },
    user: { sub: 'u1', name: 'Ada', email: 'ada@example.test' },
    scopes: ['openid'],
    tokenStore: 'keychain',
    loggedIn: true,
    updatedAt: 2,
    ...extra,
  };
}

describe('ProfileStore', () => {
  it('saves and loads a profile as pretty JSON, 0600 in a 0700 dir', async () => {
    const config = path.join(await tmp.make(), 'plat');
    const store = new ProfileStore(config);
    const p = profile('default');
    await store.save(p);
    expect(await store.load('default')).toEqual(p);
    const file = path.join(config, 'profiles', 'default.json');
    expect(store.pathOf('default')).toBe(file);
    expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify(p, null, 2)}\n`);
    if (unix) {
      expect(await modeOf(file)).toBe(0o600);
      expect(await modeOf(path.join(config, 'profiles'))).toBe(0o700);
      expect(await modeOf(config)).toBe(0o700);
    }
  });

  it('returns undefined for a profile that was never saved', async () => {
    expect(await new ProfileStore(await tmp.make()).load('nobody')).toBeUndefined();
  });

  it('overwrites a profile in place', async () => {
    const store = new ProfileStore(await tmp.make());
    await store.save(profile('default', { scopes: ['openid'] }));
    await store.save(profile('default', { scopes: ['openid', 'write'], loggedIn: false }));
    expect(await store.load('default')).toMatchObject({ scopes: ['openid', 'write'], loggedIn: false });
    expect(await readdir(store.dir)).toEqual(['default.json']);
  });

  it('lists profiles sorted by name, and nothing when there is no profiles dir', async () => {
    const store = new ProfileStore(await tmp.make());
    expect(await store.list()).toEqual([]);
    for (const name of ['work', 'Alpha', 'default', 'b.2']) await store.save(profile(name));
    expect((await store.list()).map((p) => p.name)).toEqual(['Alpha', 'b.2', 'default', 'work']);
  });

  it('keeps listing when one profile file is damaged: skipped with a warning, reported by scan()', async () => {
    const warnings: string[] = [];
    const store = new ProfileStore(await tmp.make(), { warn: (m) => warnings.push(m) });
    await store.save(profile('good'));
    await store.save(profile('zzz'));
    await writeFile(path.join(store.dir, 'broken.json'), '{"name": "broken", "baseUrl": ');
    await writeFile(path.join(store.dir, 'array.json'), '[1,2]');
    await writeFile(path.join(store.dir, 'notes.txt'), 'not a profile');
    await writeFile(path.join(store.dir, '.hidden.json'), '{}');

    expect((await store.list()).map((p) => p.name)).toEqual(['good', 'zzz']);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(path.join(store.dir, 'array.json'));
    expect(warnings[1]).toContain(path.join(store.dir, 'broken.json'));

    const { profiles, broken } = await store.scan();
    expect(profiles.map((p) => p.name)).toEqual(['good', 'zzz']);
    expect(broken.map((b) => b.name)).toEqual(['array', 'broken']);
    expect(broken[1]?.error).toBeInstanceOf(PlatError);
    expect(broken[1]?.error.message).toMatch(/broken\.json is not valid JSON.*plat login/s);
  });

  it('load() of a damaged profile is an error that names the file and the fix', async () => {
    const store = new ProfileStore(await tmp.make());
    await store.save(profile('default'));
    await writeFile(store.pathOf('default'), '');
    const error = await store.load('default').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatError);
    expect((error as PlatError).message).toContain(store.pathOf('default'));
    expect((error as PlatError).message).toMatch(/Delete it, or run `plat login` for this profile again\./);
  });

  it('takes a base URL or issuer of http or https only: another scheme is a damaged profile', async () => {
    const store = new ProfileStore(await tmp.make());
    await store.save(profile('default'));
    type Member = 'baseUrl' | 'issuer';
    const good: Array<[Member, string]> = [['baseUrl', 'HTTPS://school.example'], ['issuer', 'http://127.0.0.1:8080/']];
    const bad: Array<[Member, string]> = [['baseUrl', 'ftp://school.example'], ['issuer', 'javascript:alert(1)'], ['baseUrl', 'https-ish://x'], ['baseUrl', 'not a url']];
    for (const [member, url] of good) {
      await writeFile(store.pathOf('default'), JSON.stringify({ [member]: url }));
      expect((await store.load('default'))?.[member]).toBe(url);
    }
    for (const [member, url] of bad) {
      await writeFile(store.pathOf('default'), JSON.stringify({ [member]: url }));
      const error = await store.load('default').catch((e: unknown) => e);
      expect((error as PlatError).message, url).toMatch(/does not hold a profile/);
    }
  });

  it('takes the name from the file, not from its content', async () => {
    const store = new ProfileStore(await tmp.make());
    await store.save(profile('copied'));
    const text = (await readFile(store.pathOf('copied'), 'utf8')).replace('"copied"', '"original"');
    await writeFile(store.pathOf('copied'), text);
    expect((await store.load('copied'))?.name).toBe('copied');
  });

  it('deletes, and deleting a missing profile is fine', async () => {
    const store = new ProfileStore(await tmp.make());
    await store.save(profile('default'));
    await store.delete('default');
    await store.delete('default');
    expect(await store.load('default')).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('validates names before touching the disk', async () => {
    const config = await tmp.make();
    const store = new ProfileStore(config);
    await expect(store.save(profile('../evil'))).rejects.toBeInstanceOf(UsageError);
    await expect(store.load('.hidden')).rejects.toBeInstanceOf(UsageError);
    await expect(store.delete('a/b')).rejects.toBeInstanceOf(UsageError);
    expect(await readdir(config)).toEqual([]);
  });

  it('works when the config dir path contains spaces', async () => {
    const config = path.join(await tmp.make(), 'Application Support', 'plat');
    const store = new ProfileStore(config);
    await store.save(profile('my-profile'));
    expect((await store.list()).map((p) => p.name)).toEqual(['my-profile']);
    expect(await store.load('my-profile')).toEqual(profile('my-profile'));
  });
});
