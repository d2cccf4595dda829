import { UsageError } from '../errors.js';
import { FileTokenStore } from './file-store.js';
import {
  DEFAULT_KEYCHAIN_TIMEOUT_MS,
  KeychainTokenStore,
  KeychainUnavailableError,
  loadKeytar as defaultLoadKeytar,
  type KeytarLoader,
} from './keychain.js';
import type { Env } from './paths.js';
import { BusConnections, secretServiceReader, type SecretReader } from './secret-service.js';
import { sessionBusAddress } from './session-bus.js';
import type { StoredSession, TokenStore, TokenStoreKind } from './types.js';

const TOKEN_STORE_KINDS: readonly TokenStoreKind[] = ['keychain', 'file'];

export interface OpenTokenStoreOptions {
  env: Env;
  configDir: string;
  /** Where the profile's session was stored at login (Profile.tokenStore); absent for a new login. */
  recordedKind?: TokenStoreKind;
  /** Prints a warning on stderr: used once, when the automatic choice falls back to the file. */
  warn: (message: string) => void;
  /** Loads the keytar API; called only when a keychain store is used. Defaults to importing @github/keytar. */
  loadKeytar?: KeytarLoader;
  keychainTimeoutMs?: number;
  /** Separates keychain entries of different config dirs (see KeychainTokenStoreOptions.namespace). */
  keychainNamespace?: string;
  /** Keychain service name (tests use their own). */
  keychainService?: string;
  /**
   * Reads keychain entries without keytar; by default, on Linux, the Secret Service on the session bus named in
   * `env` (DBUS_SESSION_BUS_ADDRESS). `null`: keytar only.
   */
  readSecret?: SecretReader | null;
  /**
   * The process ends with this invocation (the CLI): the default reader's bus connections are kept by the store
   * until its release() (see BusConnections) instead of each read closing its own.
   */
  oneShot?: boolean;
  platform?: NodeJS.Platform;
}

/**
 * Chooses where sessions live. A profile's session is where the profile recorded it at login: PLAT_TOKEN_STORE
 * never hides it (a run that looked in the other store would find nothing and log the profile out, leaving the
 * real session behind unrevoked); the session layer moves it once when PLAT_TOKEN_STORE asks for the other store.
 * Without a recorded kind (a new login), `PLAT_TOKEN_STORE` decides when set; otherwise the keychain, falling back
 * to the 0600 file with one warning when the keychain is unavailable. Nothing is loaded here: keytar is imported on
 * the first keychain operation, if any.
 */
export function openTokenStore(options: OpenTokenStoreOptions): TokenStore {
  const requested = parseTokenStoreEnv(options.env.PLAT_TOKEN_STORE);
  const kind = options.recordedKind ?? requested;
  if (kind === 'file') return fileStore(options);
  if (kind === 'keychain') return keychainStore(options);
  return new AutoTokenStore(keychainStore(options), fileStore(options), options.warn);
}

/** `PLAT_TOKEN_STORE`: `keychain`, `file`, or unset/empty for the automatic choice. */
export function parseTokenStoreEnv(value: string | undefined): TokenStoreKind | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const normalized = value.trim().toLowerCase();
  const kind = TOKEN_STORE_KINDS.find((k) => k === normalized);
  if (!kind) {
    throw new UsageError(
      `PLAT_TOKEN_STORE=${JSON.stringify(value)} is not a token store: use "keychain" (the OS keychain only), ` +
        `"file" (a 0600 file in the config dir), or leave it unset for the keychain with a file fallback.`,
    );
  }
  return kind;
}

function fileStore(options: OpenTokenStoreOptions): FileTokenStore {
  return new FileTokenStore(options.configDir, { platform: options.platform });
}

function keychainStore(given: OpenTokenStoreOptions): KeychainTokenStore {
  const options = withSessionBus(given);
  const connections = options.oneShot ? new BusConnections() : undefined;
  return new KeychainTokenStore(options.loadKeytar ?? keytarOnTheBus(options.env.DBUS_SESSION_BUS_ADDRESS), {
    service: options.keychainService,
    namespace: options.keychainNamespace,
    timeoutMs: options.keychainTimeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS,
    platform: options.platform,
    readSecret: directReader(options, connections),
    connections,
  });
}

/** The options with the user's session bus found (session-bus.ts) where the environment names none. */
function withSessionBus(options: OpenTokenStoreOptions): OpenTokenStoreOptions {
  if (options.env.DBUS_SESSION_BUS_ADDRESS?.trim() || options.loadKeytar) return options;
  const address = sessionBusAddress(options.env, options.platform ?? process.platform);
  return address ? { ...options, env: { ...options.env, DBUS_SESSION_BUS_ADDRESS: address } } : options;
}

/**
 * keytar as it loads by default, reaching `address`: libsecret reads the bus address from the process's own
 * environment when it first connects, so a bus found (not named there) is put there before keytar loads.
 */
function keytarOnTheBus(address: string | undefined): KeytarLoader {
  return () => {
    if (address && !process.env.DBUS_SESSION_BUS_ADDRESS) process.env.DBUS_SESSION_BUS_ADDRESS = address;
    return defaultLoadKeytar();
  };
}

/**
 * The direct reader only stands in for the real keytar: a test's stand-in keytar (options.loadKeytar) holds entries
 * the Secret Service has never seen.
 */
function directReader(options: OpenTokenStoreOptions, kept: BusConnections | undefined): SecretReader | undefined {
  if (options.readSecret !== undefined) return options.readSecret ?? undefined;
  if (options.loadKeytar) return undefined;
  return secretServiceReader(options.env, options.platform ?? process.platform, { kept });
}

/**
 * The keychain while it works; the file from the first time it does not. `kind` and `location` name the store
 * that actually served the last operation, so the login flow records the right one in the profile after `set`.
 */
export class AutoTokenStore implements TokenStore {
  private active: TokenStore;
  private warned = false;

  constructor(
    private readonly keychain: TokenStore,
    private readonly file: FileTokenStore,
    private readonly warn: (message: string) => void,
  ) {
    this.active = keychain;
  }

  get kind(): TokenStoreKind {
    return this.active.kind;
  }

  get location(): string {
    return this.active.location;
  }

  get(profile: string): Promise<StoredSession | undefined> {
    return this.run(profile, (store) => store.get(profile));
  }

  set(profile: string, session: StoredSession): Promise<void> {
    return this.run(profile, (store) => store.set(profile, session));
  }

  delete(profile: string): Promise<void> {
    return this.run(profile, (store) => store.delete(profile));
  }

  async assertWritable(profile: string): Promise<void> {
    await this.active.assertWritable?.(profile);
  }

  release(options?: { exiting?: boolean }): void {
    this.keychain.release?.(options);
  }

  private async run<T>(profile: string, operation: (store: TokenStore) => Promise<T>): Promise<T> {
    if (this.active === this.keychain) {
      try {
        return await operation(this.keychain);
      } catch (error) {
        if (!(error instanceof KeychainUnavailableError)) throw error;
        this.fallBack(profile, error);
      }
    }
    return operation(this.file);
  }

  private fallBack(profile: string, error: KeychainUnavailableError): void {
    this.active = this.file;
    if (this.warned) return;
    this.warned = true;
    this.warn(
      `No OS keychain available (${error.reason}); keeping tokens in ${this.file.pathOf(profile)} (mode 0600). ` +
        'Set PLAT_TOKEN_STORE=file to silence this warning.',
    );
  }
}
