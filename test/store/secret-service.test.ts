/**
 * The direct keychain read (src/store/secret-service.ts over src/store/dbus.ts) against the real gnome-keyring:
 * it returns exactly what keytar stored, finds exactly keytar's entries, leaves everything it cannot be sure of to
 * keytar (locked, ambiguous, failing), and obeys the keychain deadline. The harness's keyring (test/run.mjs) holds
 * the entries keytar writes in-process; a private one per test (test/faults/keyring.ts) is locked or frozen.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DBusConnection, socketPathOf, splitSignature } from '../../src/store/dbus.js';
import { KeychainTokenStore, KeychainUnavailableError, loadKeytar, type KeytarApi, type KeytarLoader } from '../../src/store/keychain.js';
import { BusConnections, secretServiceReader, type SecretReader } from '../../src/store/secret-service.js';
import { openTokenStore } from '../../src/store/select.js';
import { startPrivateKeyring, type PrivateKeyring } from '../faults/keyring.js';
import { keyring } from '../helpers/components.js';
import { MemoryKeytar } from '../helpers/fake-keytar.js';
import { sampleSession } from '../helpers/sessions.js';
import { tempDirs } from '../helpers/tmp.js';

const tmp = tempDirs('plat-secret-service-');
afterAll(() => tmp.cleanup());

const SCHEMA = 'org.freedesktop.Secret.Generic';

/** A loader that counts how often keytar is loaded, handing out `api`. */
function countingLoader(api: KeytarApi | (() => Promise<KeytarApi>)): KeytarLoader & { loads: number } {
  const loader = Object.assign(
    async () => {
      loader.loads++;
      return typeof api === 'function' ? api() : api;
    },
    { loads: 0 },
  );
  return loader;
}

/**
 * Stores an item the way another program might (any attributes, several items with the same attributes), with
 * the Secret Service's own CreateItem over a plain session: what keytar cannot be made to write.
 */
async function createItem(busAddress: string, attributes: Record<string, string>, secret: string): Promise<void> {
  const bus = await DBusConnection.open(socketPathOf(busAddress)!, AbortSignal.timeout(5_000));
  try {
    const service = { destination: 'org.freedesktop.secrets', path: '/org/freedesktop/secrets', interface: 'org.freedesktop.Secret.Service' };
    const [, session] = await bus.call({ ...service, member: 'OpenSession', signature: 'sv', body: ['plain', ['s', '']] });
    await bus.call({
      destination: 'org.freedesktop.secrets',
      path: '/org/freedesktop/secrets/aliases/default',
      interface: 'org.freedesktop.Secret.Collection',
      member: 'CreateItem',
      signature: 'a{sv}(oayays)b',
      body: [
        [
          ['org.freedesktop.Secret.Item.Label', ['s', 'made by a test']],
          ['org.freedesktop.Secret.Item.Attributes', ['a{ss}', Object.entries(attributes)]],
        ],
        [session!, Buffer.alloc(0), Buffer.from(secret), 'text/plain'],
        false,
      ],
    });
  } finally {
    bus.close();
  }
}

describe('the session bus address', () => {
  it('is a unix socket path, an abstract socket, or nothing plat reads itself', () => {
    expect(socketPathOf('unix:path=/run/user/1000/bus')).toBe('/run/user/1000/bus');
    expect(socketPathOf('unix:path=/tmp/with%2ccomma%20space,guid=0123')).toBe('/tmp/with,comma space');
    expect(socketPathOf('unix:abstract=/tmp/dbus-XYZ,guid=0123')).toBe('\0/tmp/dbus-XYZ');
    expect(socketPathOf('tcp:host=localhost,port=1;unix:path=/second')).toBe('/second');
    expect(socketPathOf('tcp:host=localhost,port=1')).toBeUndefined();
    expect(socketPathOf('autolaunch:')).toBeUndefined();
    expect(socketPathOf('')).toBeUndefined();
    expect(socketPathOf(undefined)).toBeUndefined();
  });

  it('gives no direct reader off Linux or without a unix address: keytar reads alone there', () => {
    const env = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus' };
    expect(secretServiceReader(env, 'linux')).toBeTypeOf('function');
    expect(secretServiceReader(env, 'freebsd')).toBeTypeOf('function');
    expect(secretServiceReader(env, 'darwin')).toBeUndefined();
    expect(secretServiceReader(env, 'win32')).toBeUndefined();
    expect(secretServiceReader({}, 'linux')).toBeUndefined();
    expect(secretServiceReader({ DBUS_SESSION_BUS_ADDRESS: 'tcp:host=h,port=1' }, 'linux')).toBeUndefined();
  });

  it('splits signatures into complete types', () => {
    expect(splitSignature('sa{ss}o(oayays)av')).toEqual(['s', 'a{ss}', 'o', '(oayays)', 'av']);
    expect(() => splitSignature('(s')).toThrow();
    expect(() => splitSignature('h')).toThrow(); // file descriptors: not for plat
  });
});

describe('KeychainTokenStore with a direct reader', () => {
  it('asks keytar when the direct read fails, and keytar answers', async () => {
    const api = new MemoryKeytar();
    const session = sampleSession();
    await api.setPassword('plat', 'default', JSON.stringify(session));
    const failing: SecretReader = async () => {
      throw new Error('connect ENOENT /run/user/1000/bus');
    };
    const loader = countingLoader(api);
    expect(await new KeychainTokenStore(loader, { readSecret: failing }).get('default')).toEqual(session);
    expect(loader.loads).toBe(1);
  });

  it('asks keytar when the direct read cannot be sure (undefined)', async () => {
    const api = new MemoryKeytar();
    await api.setPassword('plat', 'default', JSON.stringify(sampleSession({ accessToken: 'from-keytar' })));
    const store = new KeychainTokenStore(api, { readSecret: async () => undefined });
    expect((await store.get('default'))?.accessToken).toBe('from-keytar');
  });

  it('holds the direct read to the keychain deadline, and does not start keytar after it', async () => {
    const hanging: SecretReader = (_service, _account, signal) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
    const loader = countingLoader(new MemoryKeytar());
    const started = Date.now();
    const error = await new KeychainTokenStore(loader, { readSecret: hanging, timeoutMs: 150 }).get('default').catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(KeychainUnavailableError);
    expect((error as KeychainUnavailableError).timedOut).toBe(true);
    expect((error as Error).message).toMatch(/^The OS keychain is not available \(no answer to a read within 0\.2 s; it may be locked/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(loader.loads).toBe(0);
  });

  it('is not used with a stand-in keytar, whose entries the Secret Service has never seen', async () => {
    const api = new MemoryKeytar();
    await api.setPassword('plat', 'default', JSON.stringify(sampleSession({ accessToken: 'stand-in' })));
    const store = openTokenStore({
      env: { PLAT_TOKEN_STORE: 'keychain', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' },
      configDir: await tmp.make(),
      warn: () => expect.fail('no warning expected'),
      loadKeytar: async () => api,
      platform: 'linux',
    });
    api.calls = 0;
    expect((await store.get('default'))?.accessToken).toBe('stand-in');
    expect(api.calls).toBe(1);
  });
});

describe.skipIf(keyring.skip)(keyring.title('direct reads from the real gnome-keyring'), () => {
  const service = `plat-test-ss-${process.pid}-${randomBytes(4).toString('hex')}`;
  let api!: KeytarApi;
  let read!: SecretReader;

  beforeEach(async () => {
    keyring.require();
    if (!api) api = await loadKeytar();
    read = secretServiceReader(process.env, process.platform)!;
    expect(read).toBeTypeOf('function');
  });

  afterAll(async () => {
    if (!api) return;
    for (const { account } of await api.findCredentials(service)) await api.deletePassword(service, account);
  });

  const within = () => AbortSignal.timeout(5_000);

  it('reads exactly what keytar stored, and null for an entry that is not there', async () => {
    const session = sampleSession({
      accessToken: randomBytes(1500).toString('base64url'),
      clientSecret: 'sécret-with-ünïcode-✓-and "quotes" \\ and\nnewline',
    });
    await api.setPassword(service, 'default', JSON.stringify(session));
    expect(await read(service, 'default', within())).toBe(JSON.stringify(session));
    expect(await read(service, 'never-stored', within())).toBeNull();
    expect(await read(`${service}-other`, 'default', within())).toBeNull();
  });

  it('matches service and account exactly', async () => {
    await api.setPassword(service, 'a', 'A');
    await api.setPassword(service, 'ab', 'AB');
    await api.setPassword(`${service}x`, 'a', 'other service');
    expect(await read(service, 'a', within())).toBe('A');
    expect(await read(service, 'ab', within())).toBe('AB');
    expect(await read(`${service}x`, 'a', within())).toBe('other service');
    await api.deletePassword(`${service}x`, 'a');
  });

  it('finds only keytar-schema items, as keytar does: another program’s item with the same names is not plat’s', async () => {
    const address = process.env.DBUS_SESSION_BUS_ADDRESS!;
    await createItem(address, { service, account: 'foreign' }, 'written by another program');
    expect(await read(service, 'foreign', within())).toBeNull();
    expect(await api.getPassword(service, 'foreign')).toBeNull();
  });

  it('leaves two matching items to keytar (undefined), and the store then answers through keytar', async () => {
    const address = process.env.DBUS_SESSION_BUS_ADDRESS!;
    for (const secret of ['first', 'second']) {
      await createItem(address, { service, account: 'twice', 'xdg:schema': SCHEMA }, JSON.stringify(sampleSession({ accessToken: secret })));
    }
    expect(await read(service, 'twice', within())).toBeUndefined();
    const loader = countingLoader(api);
    const store = new KeychainTokenStore(loader, { service, readSecret: read });
    expect(['first', 'second']).toContain((await store.get('twice'))?.accessToken);
    expect(loader.loads).toBe(1);
  });

  it('closes each read\'s bus connection, or with BusConnections keeps them until released: closed, or left unref\'d', async () => {
    await api.setPassword(service, 'kept', 'K');
    // The bus connections holding the process alive, once the event loop has run closes through.
    const pipes = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;
    };
    const before = await pipes();
    expect(await read(service, 'kept', within())).toBe('K');
    expect(await pipes()).toBe(before);

    const kept = new BusConnections();
    const keeping = secretServiceReader(process.env, process.platform, { kept })!;
    expect(await keeping(service, 'kept', within())).toBe('K');
    expect(await keeping(service, 'kept', within())).toBe('K');
    expect(await pipes()).toBe(before + 2);
    kept.release();
    expect(await pipes()).toBe(before);

    expect(await keeping(service, 'kept', within())).toBe('K');
    kept.release({ exiting: true });
    // Left to end with the process: still open, but no longer holding it alive.
    expect(await pipes()).toBe(before);
  });

  it('serves a KeychainTokenStore read without loading keytar', async () => {
    const session = sampleSession();
    await new KeychainTokenStore(api, { service }).set('direct', session);
    const loader = countingLoader(api);
    const store = new KeychainTokenStore(loader, { service, readSecret: read, namespace: undefined });
    expect(await store.get('direct')).toEqual(session);
    expect(await store.get('gone')).toBeUndefined();
    expect(loader.loads).toBe(0);
  });
});

describe.skipIf(keyring.skip)(keyring.title('direct reads from a locked or frozen gnome-keyring'), () => {
  let kr: PrivateKeyring;
  let read: SecretReader;
  const service = 'plat-test-private';

  beforeEach(async () => {
    keyring.require();
    kr = await startPrivateKeyring();
    read = secretServiceReader(kr.env, 'linux')!;
    await createItem(kr.env.DBUS_SESSION_BUS_ADDRESS!, { service, account: 'default', 'xdg:schema': SCHEMA }, JSON.stringify(sampleSession()));
  });
  afterEach(async () => {
    kr.thaw();
    await kr.stop();
  });

  it('leaves a locked item to keytar (undefined): reading it would need an unlock prompt', async () => {
    expect(await read(service, 'default', AbortSignal.timeout(5_000))).toBeTypeOf('string');
    kr.lock();
    expect(await read(service, 'default', AbortSignal.timeout(5_000))).toBeUndefined();
  });

  it('gives up on a daemon that never answers when the signal aborts', async () => {
    kr.freeze();
    const started = Date.now();
    await expect(read(service, 'default', AbortSignal.timeout(200))).rejects.toThrow(/stopped waiting for the bus/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('is what openTokenStore reads with on Linux, through the bus its env names', async () => {
    // keytar in this process talks to the harness's keyring, which has no such entry: only a direct read finds it.
    const session = sampleSession();
    await createItem(kr.env.DBUS_SESSION_BUS_ADDRESS!, { service, account: 'env-bus', 'xdg:schema': SCHEMA }, JSON.stringify(session));
    const store = openTokenStore({
      env: { PLAT_TOKEN_STORE: 'keychain', ...kr.env },
      configDir: await tmp.make(),
      warn: () => expect.fail('no warning expected'),
      keychainService: service,
      platform: 'linux',
    });
    expect(await store.get('env-bus')).toEqual(session);
  });

  it('fails (so keytar is asked) when the bus is gone', async () => {
    await kr.killBus();
    await expect(read(service, 'default', AbortSignal.timeout(5_000))).rejects.toThrow();
  });
});
