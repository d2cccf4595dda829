import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatError, UsageError } from '../../../src/errors.js';
import { FileTokenStore } from '../../../src/store/file-store.js';
import { KeychainTokenStore, KeychainUnavailableError, type KeytarLoader } from '../../../src/store/keychain.js';
import { AutoTokenStore, openTokenStore, parseTokenStoreEnv } from '../../../src/store/select.js';
import { bundleScript, nodeEnv } from '../../helpers/bundle.js';
import { failingKeytar, MemoryKeytar } from '../../helpers/fake-keytar.js';
import { sampleSession } from '../../helpers/sessions.js';
import { tempDirs } from '../../helpers/tmp.js';

const tmp = tempDirs('plat-select-');
afterAll(() => tmp.cleanup());

/** A loader that records its calls and fails like a machine without libsecret. */
function brokenLoader(): KeytarLoader & { calls: number } {
  const loader = Object.assign(
    async () => {
      loader.calls++;
      throw new KeychainUnavailableError('cannot load @github/keytar: libsecret-1.so.0: cannot open shared object file');
    },
    { calls: 0 },
  );
  return loader;
}

function forbiddenLoader(): KeytarLoader {
  return async () => expect.fail('keytar must not be loaded');
}

const noWarn = (message: string) => expect.fail(`unexpected warning: ${message}`);

describe('PLAT_TOKEN_STORE', () => {
  it('=file uses the file store and never loads keytar', async () => {
    const configDir = await tmp.make();
    const store = openTokenStore({
      env: { PLAT_TOKEN_STORE: 'file' },
      configDir,
      warn: noWarn,
      loadKeytar: forbiddenLoader(),
    });
    expect(store).toBeInstanceOf(FileTokenStore);
    expect(store.kind).toBe('file');
    expect(store.location).toBe(path.join(configDir, 'tokens'));
    const session = sampleSession();
    await store.set('default', session);
    expect(await store.get('default')).toEqual(session);
    await store.delete('default');
  });

  it('=keychain uses only the keychain: its failures are errors, with no fallback and no warning', async () => {
    const configDir = await tmp.make();
    const loader = brokenLoader();
    const store = openTokenStore({
      env: { PLAT_TOKEN_STORE: 'keychain' },
      configDir,
      warn: noWarn,
      loadKeytar: loader,
    });
    expect(store).toBeInstanceOf(KeychainTokenStore);
    expect(loader.calls).toBe(0); // opening loads nothing
    const error = await store.set('default', sampleSession()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeychainUnavailableError);
    expect((error as PlatError).exitCode).toBe(1);
    expect((error as Error).message).toMatch(/Set PLAT_TOKEN_STORE=file to keep tokens in a 0600 file instead\.$/);
    expect(await readdir(configDir)).toEqual([]);
  });

  it('=keychain works over a working keychain', async () => {
    const api = new MemoryKeytar();
    const store = openTokenStore({
      env: { PLAT_TOKEN_STORE: 'keychain' },
      configDir: await tmp.make(),
      warn: noWarn,
      loadKeytar: async () => api,
    });
    await store.set('default', sampleSession({ accessToken: 'K' }));
    expect((await store.get('default'))?.accessToken).toBe('K');
    expect(api.entries.size).toBe(1);
  });

  it.each(['keyring', 'files', 'none', '1'])('rejects %j with a usage error naming the allowed values', (value) => {
    const error = (() => {
      try {
        openTokenStore({ env: { PLAT_TOKEN_STORE: value }, configDir: '/unused', warn: noWarn });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as Error).message).toContain(`PLAT_TOKEN_STORE="${value}"`);
    expect((error as Error).message).toMatch(/"keychain".*"file".*unset/);
  });

  it('accepts surrounding spaces and any case, and treats empty as unset', () => {
    expect(parseTokenStoreEnv(' File ')).toBe('file');
    expect(parseTokenStoreEnv('KEYCHAIN')).toBe('keychain');
    expect(parseTokenStoreEnv('')).toBeUndefined();
    expect(parseTokenStoreEnv(undefined)).toBeUndefined();
    const store = openTokenStore({ env: { PLAT_TOKEN_STORE: '' }, configDir: '/unused', warn: noWarn });
    expect(store).toBeInstanceOf(AutoTokenStore);
  });
});

describe('the kind recorded in the profile', () => {
  it.each([
    ['keychain', 'file'],
    ['file', 'keychain'],
  ] as const)("'%s' beats PLAT_TOKEN_STORE=%s: the session is read where it is (the session layer moves it)", async (recorded, requested) => {
    const store = openTokenStore({ env: { PLAT_TOKEN_STORE: requested }, configDir: await tmp.make(), recordedKind: recorded, warn: noWarn, loadKeytar: brokenLoader() });
    expect(store.kind).toBe(recorded);
  });

  it("'file' is honoured without loading keytar", async () => {
    const store = openTokenStore({
      env: {},
      configDir: await tmp.make(),
      recordedKind: 'file',
      warn: noWarn,
      loadKeytar: forbiddenLoader(),
    });
    expect(store).toBeInstanceOf(FileTokenStore);
    expect(await store.get('default')).toBeUndefined();
  });

  it("'keychain' is honoured strictly: the session is there or nowhere, so no fallback", async () => {
    const store = openTokenStore({
      env: {},
      configDir: await tmp.make(),
      recordedKind: 'keychain',
      warn: noWarn,
      loadKeytar: brokenLoader(),
    });
    expect(store).toBeInstanceOf(KeychainTokenStore);
    await expect(store.get('default')).rejects.toBeInstanceOf(KeychainUnavailableError);
  });
});

describe('automatic choice for a new login', () => {
  it('uses the keychain when it works, without a warning', async () => {
    const api = new MemoryKeytar();
    const configDir = await tmp.make();
    const store = openTokenStore({ env: {}, configDir, warn: noWarn, loadKeytar: async () => api });
    expect(store.kind).toBe('keychain');
    await store.set('default', sampleSession());
    expect(store.kind).toBe('keychain');
    expect(store.location).toBe(new KeychainTokenStore(api).location);
    expect(api.entries.size).toBe(1);
    expect(await readdir(configDir)).toEqual([]);
  });

  it('falls back to the file when keytar cannot load, warning once with the reason and the path', async () => {
    const configDir = await tmp.make();
    const warnings: string[] = [];
    const loader = brokenLoader();
    const store = openTokenStore({ env: {}, configDir, warn: (m) => warnings.push(m), loadKeytar: loader });
    expect(loader.calls).toBe(0);

    const session = sampleSession();
    await store.set('default', session);
    expect(store.kind).toBe('file');
    expect(store.location).toBe(path.join(configDir, 'tokens'));
    expect(await store.get('default')).toEqual(session);
    await store.set('other', sampleSession());
    await store.delete('other');

    expect(loader.calls).toBe(1); // once it fell back, the keychain is not tried again
    expect(warnings).toEqual([
      'No OS keychain available (cannot load @github/keytar: libsecret-1.so.0: cannot open shared object file); ' +
        `keeping tokens in ${path.join(configDir, 'tokens', 'default.json')} (mode 0600). ` +
        'Set PLAT_TOKEN_STORE=file to silence this warning.',
    ]);
  });

  it('falls back when a keychain operation fails, and warns only once for concurrent operations', async () => {
    const configDir = await tmp.make();
    const warnings: string[] = [];
    const store = openTokenStore({
      env: {},
      configDir,
      warn: (m) => warnings.push(m),
      loadKeytar: async () => failingKeytar('The name org.freedesktop.secrets was not provided by any .service files'),
    });
    await Promise.all([store.get('a'), store.get('b'), store.set('c', sampleSession())]);
    expect(store.kind).toBe('file');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^No OS keychain available \(The name org\.freedesktop\.secrets was not provided/);
    expect(await readdir(path.join(configDir, 'tokens'))).toEqual(['c.json']);
  });

  it('falls back when the keychain does not answer in time', async () => {
    const warnings: string[] = [];
    const store = openTokenStore({
      env: {},
      configDir: await tmp.make(),
      warn: (m) => warnings.push(m),
      loadKeytar: async () =>
        Object.assign(new MemoryKeytar(), { setPassword: () => new Promise<void>(() => undefined) }),
      keychainTimeoutMs: 100,
    });
    await store.set('default', sampleSession());
    expect(store.kind).toBe('file');
    expect(warnings[0]).toMatch(/^No OS keychain available \(no answer to a write within 0\.1 s;/);
  });

  it('does not fall back on errors that are not about the keychain being unavailable', async () => {
    const api = new MemoryKeytar();
    await api.setPassword('plat', 'default', 'garbage');
    const store = openTokenStore({ env: {}, configDir: await tmp.make(), warn: noWarn, loadKeytar: async () => api });
    await expect(store.get('default')).rejects.toThrow(/is damaged/);
    await expect(store.get('../x')).rejects.toBeInstanceOf(UsageError);
    expect(store.kind).toBe('keychain');
  });
});

describe('real processes', () => {
  let script: string;

  beforeAll(async () => {
    script = await bundleScript(
      `
      import { openTokenStore } from ${JSON.stringify(path.resolve('src/store/select.ts'))};
      // Native addons (keytar's included) are loaded through process.dlopen, whichever module system asks.
      const native: string[] = [];
      const dlopen = process.dlopen;
      process.dlopen = (module: unknown, file: string, ...rest: unknown[]) => {
        native.push(file);
        return (dlopen as (...a: unknown[]) => unknown)(module, file, ...rest);
      };
      async function main() {
        const store = openTokenStore({
          env: { PLAT_TOKEN_STORE: process.argv[3] },
          configDir: process.argv[2]!,
          warn: (m) => console.error('WARN ' + m),
        });
        await store.set('default', { accessToken: 'at', tokenType: 'Bearer', obtainedAt: 1, scopes: [] });
        const token = (await store.get('default'))?.accessToken;
        const keytarLoaded = native.some((file) => file.includes('keytar'));
        console.log(JSON.stringify({ kind: store.kind, location: store.location, token, keytarLoaded }));
      }
      main().catch((e) => { console.error('ERROR ' + e.message); process.exit(1); });
      `,
      await tmp.make(),
      'open-store',
    );
  });

  function run(args: string[], env: NodeJS.ProcessEnv) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  const noBus = () => {
    const env = nodeEnv({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/plat-test-bus' });
    delete env.DISPLAY;
    return env;
  };

  it('without a session bus, falls back to the file with the warning, through the real keytar', async () => {
    const configDir = path.join(await tmp.make(), 'plat');
    const { code, stdout, stderr } = await run([configDir, ''], noBus());
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      kind: 'file',
      location: path.join(configDir, 'tokens'),
      token: 'at',
      keytarLoaded: true,
    });
    expect(stderr).toMatch(
      /^WARN No OS keychain available \(.+\); keeping tokens in .*default\.json \(mode 0600\)\. Set PLAT_TOKEN_STORE=file to silence this warning\.\n$/,
    );
    expect(stderr).not.toMatch(/cannot load/); // keytar loaded; it was the missing bus that failed
  });

  it('with PLAT_TOKEN_STORE=file, never loads keytar and prints nothing', async () => {
    const configDir = path.join(await tmp.make(), 'plat');
    const { code, stdout, stderr } = await run([configDir, 'file'], noBus());
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual({
      kind: 'file',
      location: path.join(configDir, 'tokens'),
      token: 'at',
      keytarLoaded: false,
    });
  });
});
