/**
 * The session in the real OS keychain (gnome-keyring on a private D-Bus session started by `npm test`), and the
 * fallback to the 0600 file when no keychain can be reached.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, type Home } from '../helpers/cli.js';
import { keyring } from '../helpers/components.js';
import { usePlatform } from '../helpers/platform.js';
import { filesWithText } from '../helpers/state.js';

const platform = usePlatform();
let home: Home;

afterEach(async () => {
  await home?.cleanup();
});

async function everyFileText(dir: string): Promise<string> {
  return (await filesWithText(dir)).map(({ text }) => text).join('\n');
}

describe.skipIf(keyring.skip)(keyring.title('login with the real keychain'), () => {
  beforeEach(async () => {
    keyring.require();
    home = await makeHome({ PLAT_TOKEN_STORE: undefined });
  });

  it('stores the tokens in the keychain, never in a file, and uses them', async () => {
    const login = await home.login(platform, ['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).not.toMatch(/warning/);
    const profile = JSON.parse(await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8'));
    expect(profile.tokenStore).toBe('keychain');
    const text = await everyFileText(home.dir);
    for (const secret of platform.secrets()) expect(text).not.toContain(secret);
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);
    const status = JSON.parse((await home.run(['status', '--json'])).stdout);
    expect(status.profiles[0].tokenStore).toBe('keychain');
    expect((await home.run(['logout'])).code).toBe(0);
    expect((await home.run(['token'])).code).toBe(4);
  });

  it('a login into another store than the last one moves the session: the old copy does not stay behind', async () => {
    const toFile = await home.login(platform, [], { env: { PLAT_TOKEN_STORE: 'file' } });
    expect(toFile.code, toFile.stderr).toBe(0);
    const filed = (await home.run(['token'])).stdout.trim();
    expect(await everyFileText(home.dir)).toContain(filed);

    // The keychain now: the token file goes.
    expect((await home.login(platform)).code).toBe(0);
    expect(JSON.parse(await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8')).tokenStore).toBe('keychain');
    const keyed = (await home.run(['token'])).stdout.trim();
    const text = await everyFileText(home.dir);
    for (const token of [filed, keyed]) expect(text).not.toContain(token);

    // Back to the file, the keychain unreachable this time: the login still succeeds, into the file.
    const back = await home.login(platform, [], { env: { PLAT_TOKEN_STORE: 'file', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' } });
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8')).tokenStore).toBe('file');
    expect((await home.run(['token'])).code).toBe(0);
  });

  it('keeps sessions of different config dirs apart in one keychain', async () => {
    const other = await makeHome({ PLAT_TOKEN_STORE: undefined });
    try {
      expect((await home.login(platform)).code).toBe(0);
      expect((await other.login(platform)).code).toBe(0);
      const a = (await home.run(['token'])).stdout;
      const b = (await other.run(['token'])).stdout;
      expect(a).not.toBe(b);
      expect((await other.run(['logout'])).code).toBe(0);
      expect((await home.run(['token'])).stdout).toBe(a);
    } finally {
      await other.cleanup();
    }
  });

  it('PLAT_TOKEN_STORE=keychain fails clearly when no keychain is reachable', async () => {
    const result = await home.login(platform, [], { env: { PLAT_TOKEN_STORE: 'keychain', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/keychain is not available/i);
    expect(result.stderr).toMatch(/PLAT_TOKEN_STORE=file/);
  });
});

describe('the file fallback', () => {
  beforeEach(async () => {
    home = await makeHome({ PLAT_TOKEN_STORE: undefined, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', DISPLAY: undefined });
  });

  it('falls back to a 0600 file with a warning when no keychain is reachable', async () => {
    const login = await home.login(platform, ['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toMatch(/warning: No OS keychain available/);
    expect(login.stderr).toMatch(/PLAT_TOKEN_STORE=file/);
    const profile = JSON.parse(await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8'));
    expect(profile.tokenStore).toBe('file');
    const call = await home.run(['call', 'GET', '/api/courses']);
    expect(call.code).toBe(0);
    expect(call.stderr).toBe('');
  });

  it('warns once per profile: a later login of the same profile, still without a keychain, says nothing', async () => {
    expect((await home.login(platform)).stderr).toMatch(/warning: No OS keychain available/);
    const again = await home.login(platform);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/keychain/i);
    expect((await home.run(['logout'])).code).toBe(0);
    expect((await home.login(platform)).stderr).not.toMatch(/keychain/i);
    // another profile has not been told yet
    expect((await home.login(platform, ['--profile', 'work'])).stderr).toMatch(/warning: No OS keychain available/);
  });

  it('rejects an unknown PLAT_TOKEN_STORE as a usage error', async () => {
    const result = await home.run(['token'], { env: { PLAT_TOKEN_STORE: 'vault' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/PLAT_TOKEN_STORE/);
  });
});
