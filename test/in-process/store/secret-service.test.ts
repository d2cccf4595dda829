/**
 * The direct keychain read (src/store/secret-service.ts over src/store/dbus.ts) against the real gnome-keyring:
 * it holds to keytar's contract (src/store/keytar-item.ts) both ways — what keytar stored reads back exactly, and
 * an item written to the contract is what keytar reads — finds exactly keytar's entries, leaves everything it
 * cannot be sure of to keytar (locked, ambiguous, failing, libsecret's file backend), and obeys the keychain
 * deadline. The harness's keyring (test/run.mjs) holds the entries keytar writes in-process, each test under a
 * service of its own; a private keyring per test (test/faults/keyring.ts) is locked, frozen, or holds another
 * program's items: items whose fate depends on the daemon reloading its file, which any other test's write to a
 * shared keyring can cause (the suite's one random failure, issue 28).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DBusConnection, splitSignature } from '../../../src/store/dbus.js';
import { socketPathOf } from '../../../src/store/session-bus.js';
import { KeychainTokenStore, KeychainUnavailableError, loadKeytar, type KeytarApi, type KeytarLoader } from '../../../src/store/keychain.js';
import { KEYTAR_CONTENT_TYPE, KEYTAR_SCHEMA, encodeKeytarSecret, keytarAttributes } from '../../../src/store/keytar-item.js';
import { BusConnections, mayUseLibsecretFile, secretServiceReader, type SecretReader } from '../../../src/store/secret-service.js';
import { openTokenStore } from '../../../src/store/select.js';
import { startPrivateKeyring, type PrivateKeyring } from '../../faults/keyring.js';
import { keyring } from '../../helpers/components.js';
import { MemoryKeytar } from '../../helpers/fake-keytar.js';
import { sampleSession } from '../../helpers/sessions.js';
import { tempDirs } from '../../helpers/tmp.js';
import { scaled } from '../../helpers/time.js';

const tmp = tempDirs('plat-secret-service-');
afterAll(() => tmp.cleanup());

const SCHEMA = KEYTAR_SCHEMA;

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
async function createItem(busAddress: string, attributes: Record<string, string>, secret: string | Buffer, contentType = 'text/plain'): Promise<void> {
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
        [session!, Buffer.alloc(0), Buffer.isBuffer(secret) ? secret : Buffer.from(secret), contentType],
        false,
      ],
    });
  } finally {
    bus.close();
  }
}

/**
 * keytar's answer on the bus `env` names, from a process of its own (libsecret in this process is bound to the
 * harness's bus for good): what `plat` would read with keytar there.
 */
function keytarReads(env: Record<string, string | undefined>, service: string, account: string): Promise<string | null> {
  const keytarPath = createRequire(import.meta.url)('node:path').dirname(createRequire(import.meta.url).resolve('@github/keytar/package.json'));
  const script = `require(${JSON.stringify(keytarPath)}).getPassword(process.argv[1], process.argv[2]).then((v) => process.stdout.write(JSON.stringify(v)), (e) => { process.stderr.write(String(e)); process.exit(1); })`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script, service, account], { env: { ...process.env, ...env }, timeout: 10_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`keytar failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as string | null);
    });
  });
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

  it('gives no direct reader where libsecret may keep keytar\'s entries in its own file: the bus is not keytar\'s answer there', () => {
    const env = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus' };
    // SECRET_BACKEND=file, or a Flatpak sandbox (libsecret then uses its file whenever the portal is there)
    expect(secretServiceReader({ ...env, SECRET_BACKEND: 'file' }, 'linux', { sandboxed: false })).toBeUndefined();
    expect(secretServiceReader(env, 'linux', { sandboxed: true })).toBeUndefined();
    expect(secretServiceReader({ ...env, SECRET_BACKEND: 'service' }, 'linux', { sandboxed: true })).toBeUndefined();
    expect(secretServiceReader({ ...env, SECRET_BACKEND: 'service' }, 'linux', { sandboxed: false })).toBeTypeOf('function');
    expect(mayUseLibsecretFile({}, false)).toBe(false);
    expect(mayUseLibsecretFile({ SECRET_BACKEND: ' file ' }, false)).toBe(true);
    // This machine is not a sandbox: the default reads on (a sandbox would say so with /.flatpak-info).
    expect(secretServiceReader(env, 'linux')).toBeTypeOf('function');
  });

  it('with libsecret\'s file backend, a store answers through keytar, never from the bus', async () => {
    const api = new MemoryKeytar();
    await api.setPassword('plat', 'default', JSON.stringify(sampleSession({ accessToken: 'from-the-file' })));
    const loader = countingLoader(api);
    const store = new KeychainTokenStore(loader, {
      readSecret: secretServiceReader({ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? 'unix:path=/run/bus', SECRET_BACKEND: 'file' }, 'linux'),
    });
    expect((await store.get('default'))?.accessToken).toBe('from-the-file');
    expect(loader.loads).toBe(1);
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
    expect(Date.now() - started).toBeLessThan(scaled(1_000));
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

  it('holds keytar\'s contract the other way: an item written to it (attributes, UTF-8, text/plain) is what keytar reads', async () => {
    const address = process.env.DBUS_SESSION_BUS_ADDRESS!;
    const password = JSON.stringify(sampleSession({ accessToken: 'wrïtten-tö-the-contract ✓', clientSecret: 'a\nb "c" \\ d' }));
    await createItem(address, Object.fromEntries(keytarAttributes(service, 'contract')), encodeKeytarSecret(password), KEYTAR_CONTENT_TYPE);
    expect(await api.getPassword(service, 'contract')).toBe(password);
    expect(await read(service, 'contract', within())).toBe(password);
    // and keytar's own write carries exactly the contract's attributes: found by them, and by nothing less
    await api.setPassword(service, 'by-keytar', 'K');
    expect(await read(service, 'by-keytar', within())).toBe('K');
    expect(keytarAttributes(service, 'by-keytar').map(([name]) => name).sort()).toEqual(['account', 'service', 'xdg:schema']);
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

  it('a one-shot process\'s token store keeps its bus connections until release(): closed, or left unref\'d', async () => {
    const session = sampleSession();
    await new KeychainTokenStore(api, { service }).set('one-shot', session);
    const pipes = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;
    };
    const before = await pipes();
    const open = (oneShot: boolean) =>
      openTokenStore({ env: { ...process.env, PLAT_TOKEN_STORE: 'keychain' }, configDir: '/unused', warn: () => expect.fail('no warning expected'), keychainService: service, oneShot, platform: 'linux' });
    const store = open(true);
    expect(await store.get('one-shot')).toEqual(session);
    expect(await store.get('one-shot')).toEqual(session);
    expect(await pipes()).toBe(before + 2);
    store.release?.();
    expect(await pipes()).toBe(before);
    expect(await store.get('one-shot')).toEqual(session);
    store.release?.({ exiting: true });
    expect(await pipes()).toBe(before);
    // a library's store (not one-shot) closes each read's connection as it goes
    const library = open(false);
    expect(await library.get('one-shot')).toEqual(session);
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
    expect(Date.now() - started).toBeLessThan(scaled(2_000));
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

  it('finds only keytar-schema items, as keytar does, and agrees with keytar across the daemon reloading its file', async () => {
    // Another program's items under plat's service and account: one under a schema of its own, one under none.
    // gnome-keyring keeps an item's schema in its file as a type in which "none" is the generic one, so once it
    // reloads that file (it does after a write in a later second than its last read: in a shared keyring, any
    // other test's write) the schema-less item is a keytar one for keytar and the direct read alike. This keyring
    // is this test's own, and the reload is made to happen rather than left to chance.
    const env = kr.env;
    const address = env.DBUS_SESSION_BUS_ADDRESS!;
    await createItem(address, { service, account: 'foreign', 'xdg:schema': 'org.example.OtherProgram' }, 'written by another program');
    await createItem(address, { service, account: 'no-schema' }, 'written without a schema');
    const within = () => AbortSignal.timeout(5_000);
    expect(await read(service, 'foreign', within())).toBeNull();
    expect(await keytarReads(env, service, 'foreign')).toBeNull();
    expect(await read(service, 'no-schema', within())).toBe(await keytarReads(env, service, 'no-schema'));

    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await createItem(address, Object.fromEntries(keytarAttributes(service, 'later')), 'a later write');
    const keytarNoSchema = await keytarReads(env, service, 'no-schema');
    expect(await read(service, 'no-schema', within())).toBe(keytarNoSchema);
    expect(await read(service, 'foreign', within())).toBeNull();
    expect(await keytarReads(env, service, 'foreign')).toBeNull();
    expect(await read(service, 'later', within())).toBe('a later write');
  });

  it('fails (so keytar is asked) when the bus is gone', async () => {
    await kr.killBus();
    await expect(read(service, 'default', AbortSignal.timeout(5_000))).rejects.toThrow();
  });
});
