import { randomBytes } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { PlatError, UsageError } from '../../../src/errors.js';
import {
  KeychainTokenStore,
  KeychainUnavailableError,
  loadKeytar,
  pickKeytarApi,
  type KeytarApi,
} from '../../../src/store/keychain.js';
import { openTokenStore } from '../../../src/store/select.js';
import { keyring } from '../../helpers/components.js';
import { failingKeytar, hangingKeytar, MemoryKeytar } from '../../helpers/fake-keytar.js';
import { sampleSession } from '../../helpers/sessions.js';
import { tempDirs } from '../../helpers/tmp.js';
import { scaled } from '../../helpers/time.js';

const tmp = tempDirs('plat-keychain-');
afterAll(() => tmp.cleanup());

describe('KeychainTokenStore over a stand-in API', () => {
  it('stores the whole session as one JSON password under service plat, account = profile', async () => {
    const api = new MemoryKeytar();
    const store = new KeychainTokenStore(api);
    const session = sampleSession();
    await store.set('work', session);
    expect(store.kind).toBe('keychain');
    expect(store.service).toBe('plat');
    expect(JSON.parse((await api.getPassword('plat', 'work'))!)).toEqual(session);
    api.calls = 0;
    expect(await store.get('work')).toEqual(session);
    expect(api.calls).toBe(1); // one keychain read per get
  });

  it('names the keychain by platform for plat status', () => {
    const api = new MemoryKeytar();
    expect(new KeychainTokenStore(api, { platform: 'linux' }).location).toBe('OS keychain (Secret Service)');
    expect(new KeychainTokenStore(api, { platform: 'darwin' }).location).toBe('macOS Keychain');
    expect(new KeychainTokenStore(api, { platform: 'win32' }).location).toBe('Windows Credential Manager');
  });

  it('gives up on a keychain that never answers, with the fallback advice', async () => {
    const store = new KeychainTokenStore(hangingKeytar(), { timeoutMs: 150 });
    for (const operation of [() => store.get('default'), () => store.set('default', sampleSession())]) {
      const started = Date.now();
      const error = await operation().catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(scaled(1_000));
      expect(error).toBeInstanceOf(KeychainUnavailableError);
      expect((error as KeychainUnavailableError).timedOut).toBe(true);
      expect((error as PlatError).exitCode).toBe(1);
      expect((error as PlatError).message).toMatch(
        /^The OS keychain is not available \(no answer to a (read|write) within 0\.2 s; it may be locked and waiting for an unlock prompt\)\. Set PLAT_TOKEN_STORE=file to keep tokens in a 0600 file instead\.$/,
      );
    }
  });

  it('turns keychain errors into KeychainUnavailableError, never quoting the token', async () => {
    const session = sampleSession();
    const store = new KeychainTokenStore(failingKeytar('Cannot autolaunch D-Bus without X11 $DISPLAY'));
    const error = await store.set('default', session).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeychainUnavailableError);
    expect((error as KeychainUnavailableError).reason).toBe('Cannot autolaunch D-Bus without X11 $DISPLAY');
    expect((error as KeychainUnavailableError).timedOut).toBe(false);
    expect((error as Error).message).toBe(
      'The OS keychain is not available (Cannot autolaunch D-Bus without X11 $DISPLAY). ' +
        'Set PLAT_TOKEN_STORE=file to keep tokens in a 0600 file instead.',
    );
    expect((error as Error).message).not.toContain(session.accessToken);
  });

  it('turns a failing loader into KeychainUnavailableError, and loads only once', async () => {
    let loads = 0;
    const store = new KeychainTokenStore(async () => {
      loads++;
      throw new Error('libsecret-1.so.0: cannot open shared object file');
    });
    expect(loads).toBe(0); // nothing loaded until used
    await expect(store.get('default')).rejects.toThrow(
      /^The OS keychain is not available \(cannot load the keychain module: libsecret-1\.so\.0: cannot open shared object file\)/,
    );
    await expect(store.delete('default')).rejects.toBeInstanceOf(KeychainUnavailableError);
    expect(loads).toBe(1);
  });

  it('reports a damaged stored value as needing a new login, without quoting it', async () => {
    const api = new MemoryKeytar();
    await api.setPassword('plat', 'default', '{"accessToken":"at-leaky-secret",');
    await api.setPassword('plat', 'other', '{"not":"a session"}');
    const store = new KeychainTokenStore(api);
    for (const profile of ['default', 'other']) {
      const error = await store.get(profile).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PlatError);
      expect(error).not.toBeInstanceOf(KeychainUnavailableError); // a damaged entry is not a reason to fall back
      expect((error as Error).message).toMatch(/is damaged\. Run `plat login --profile \w+` again\./);
      expect((error as Error).message).not.toContain('leaky');
    }
  });

  it('returns undefined for a missing entry and ignores deleting one', async () => {
    const store = new KeychainTokenStore(new MemoryKeytar());
    expect(await store.get('default')).toBeUndefined();
    await store.delete('default');
  });

  it('validates profile names', async () => {
    await expect(new KeychainTokenStore(new MemoryKeytar()).get('../x')).rejects.toBeInstanceOf(UsageError);
  });

  it('accepts keytar as a default export or as named exports', () => {
    const api = new MemoryKeytar();
    const named = {
      getPassword: api.getPassword,
      setPassword: api.setPassword,
      deletePassword: api.deletePassword,
      findCredentials: api.findCredentials,
    };
    expect(pickKeytarApi({ default: named, getPassword: named.getPassword })).toBe(named);
    expect(pickKeytarApi(named)).toBe(named);
    expect(pickKeytarApi({ default: { getPassword: named.getPassword } })).toBeUndefined();
    expect(pickKeytarApi(null)).toBeUndefined();
  });
});

/**
 * Against the OS keychain: gnome-keyring on a private session bus started by test/run.mjs. Entries use a
 * service name unique to this run and are all removed afterwards.
 */
describe.skipIf(keyring.skip)(keyring.title('real keychain'), () => {
  const service = `plat-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  let api!: KeytarApi;

  // In beforeEach, not beforeAll: in CI a missing keyring must fail each test, not skip them behind a failed hook.
  beforeEach(async () => {
    keyring.require();
    if (!api) api = await loadKeytar();
  });

  afterAll(async () => {
    if (!api) return;
    for (const { account } of await api.findCredentials(service)) await api.deletePassword(service, account);
    expect(await api.findCredentials(service)).toEqual([]);
  });

  it('round-trips a session: set, get, replace, delete', async () => {
    const store = new KeychainTokenStore(api, { service });
    const first = sampleSession();
    await store.set('default', first);
    expect(await store.get('default')).toEqual(first);

    const second = sampleSession({ accessToken: 'rotated', refreshToken: 'rotated-rt' });
    await store.set('default', second);
    expect(await store.get('default')).toEqual(second);
    expect(await store.accounts()).toEqual(['default']);

    await store.delete('default');
    expect(await store.get('default')).toBeUndefined();
    expect(await api.getPassword(service, 'default')).toBeNull();
  });

  it('keeps a large JSON blob byte for byte (long JWTs, unicode, every optional field)', async () => {
    const store = new KeychainTokenStore(api, { service });
    const jwt = (n: number) =>
      [randomBytes(n).toString('base64url'), randomBytes(n * 4).toString('base64url'), randomBytes(256).toString('base64url')].join('.');
    const session = sampleSession({
      accessToken: jwt(64),
      refreshToken: jwt(48),
      idToken: jwt(80),
      clientSecret: 'sécret-with-ünïcode-✓-and "quotes" \\ and\nnewline',
      scopes: ['openid', 'profile', 'email', 'courses:read', 'grades:write', 'naïve-scope'],
      expiresAt: 1_900_000_000_123,
      obtainedAt: 1_899_999_999_001,
    });
    await store.set('big.blob_1', session);
    const raw = await api.getPassword(service, 'big.blob_1');
    expect(raw).toBe(JSON.stringify(session));
    expect(raw!.length).toBeGreaterThan(2_000);
    expect(await store.get('big.blob_1')).toEqual(session);
    await store.delete('big.blob_1');
  });

  it('keeps profiles apart and lists them', async () => {
    const store = new KeychainTokenStore(api, { service });
    await store.set('a', sampleSession({ accessToken: 'A' }));
    await store.set('b', sampleSession({ accessToken: 'B' }));
    expect((await store.get('a'))?.accessToken).toBe('A');
    expect((await store.get('b'))?.accessToken).toBe('B');
    expect(await store.accounts()).toEqual(['a', 'b']);
    await store.delete('a');
    await store.delete('b');
    expect(await store.accounts()).toEqual([]);
  });

  it('deleting an entry that does not exist is not an error', async () => {
    const store = new KeychainTokenStore(api, { service });
    await store.delete('never-stored');
    expect(await store.get('never-stored')).toBeUndefined();
  });

  it('reports a damaged entry written by something else', async () => {
    await api.setPassword(service, 'damaged', 'not json at all');
    const store = new KeychainTokenStore(api, { service });
    await expect(store.get('damaged')).rejects.toThrow(/is damaged\. Run `plat login --profile damaged` again\./);
    await store.delete('damaged');
  });

  it('is what openTokenStore picks for a new login, with no warning and no file written', async () => {
    const configDir = await tmp.make();
    const warnings: string[] = [];
    const store = openTokenStore({ env: {}, configDir, warn: (m) => warnings.push(m), keychainService: service });
    const session = sampleSession();
    await store.set('auto', session);
    expect(store.kind).toBe('keychain');
    expect(store.location).toBe('OS keychain (Secret Service)');
    expect(await store.get('auto')).toEqual(session);
    await store.delete('auto');
    expect(warnings).toEqual([]);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(configDir)).toEqual([]);
  });

  it('is used with PLAT_TOKEN_STORE=keychain through the real loader', async () => {
    const store = openTokenStore({
      env: { PLAT_TOKEN_STORE: 'keychain' },
      configDir: await tmp.make(),
      warn: () => expect.fail('no warning expected'),
      keychainService: service,
    });
    await store.set('explicit', sampleSession({ accessToken: 'E' }));
    expect((await store.get('explicit'))?.accessToken).toBe('E');
    await store.delete('explicit');
  });
});
