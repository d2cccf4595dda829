/**
 * The built CLI reads a keychain session without keytar (src/store/secret-service.ts), and still uses keytar for
 * what the direct read leaves to it. keytar is made unloadable for one command by an empty libsecret-1.so.0 ahead
 * of the system's on LD_LIBRARY_PATH: the dynamic linker then refuses its native addon, as on a machine without
 * libsecret. A bundle in which the direct read silently broke would fall back to keytar and fail here.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, runPlatProbed, type Home } from '../helpers/cli.js';
import { keyring } from '../helpers/components.js';
import { tempDirs } from '../helpers/tmp.js';
import { usePlatform } from '../helpers/platform.js';

const tmp = tempDirs('plat-keychain-read-');
const platform = usePlatform();
let home: Home;
let noKeytar: Record<string, string>;

beforeAll(async () => {
  const libDir = path.join(await tmp.make(), 'lib');
  await mkdir(libDir);
  await writeFile(path.join(libDir, 'libsecret-1.so.0'), '');
  noKeytar = { LD_LIBRARY_PATH: libDir };
});
afterAll(async () => {
  await tmp.cleanup();
});

describe.skipIf(keyring.skip || process.platform !== 'linux')(keyring.title('reading the real keychain without keytar'), () => {
  beforeEach(async () => {
    keyring.require();
    home = await makeHome({ PLAT_TOKEN_STORE: undefined });
    const login = await home.login(platform, ['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
  });
  afterEach(async () => {
    await home.run(['logout']);
    await home.cleanup();
  });

  it('token, call and whoami read the session straight from the Secret Service', async () => {
    const token = await home.run(['token'], { env: noKeytar });
    expect(token.code, token.stderr).toBe(0);
    expect(token.stderr).toBe('');
    expect(token.stdout.trim()).toBe((await home.run(['token'])).stdout.trim());

    const call = await home.run(['call', 'GET', '/api/courses'], { env: noKeytar });
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);

    const whoami = await home.run(['whoami'], { env: noKeytar });
    expect(whoami.code, whoami.stderr).toBe(0);
  });

  it('token, call and whoami build no stderr stream: the bus connection is left to end with the process', async () => {
    // Closing a socket builds process.stderr (net.Socket's destroy compares itself with it): 2-3 ms a quiet
    // keychain command would pay for nothing (src/store/secret-service.ts BusConnections).
    for (const args of [['token'], ['call', 'GET', '/api/courses'], ['whoami']]) {
      const { code, stderr, touched } = await runPlatProbed(home, args);
      expect(code, stderr).toBe(0);
      expect(touched, `plat ${args.join(' ')}`).toEqual([]);
    }
  });

  it('still needs keytar to write: logout without it says the keychain is unavailable, and keeps the session', async () => {
    const logout = await home.run(['logout', '--no-revoke'], { env: noKeytar });
    expect(logout.code).toBe(1);
    expect(logout.stderr).toMatch(/The OS keychain is not available \(cannot load @github\/keytar/);
    expect((await home.run(['token'])).code).toBe(0);
  });
});
