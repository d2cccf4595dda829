import { ExitCode, PlatError } from '../errors.js';
import { DamagedDataError } from './atomic.js';
import { validateProfileName } from './paths.js';
import type { BusConnections, SecretReader } from './secret-service.js';
import { isStoredSession, type StoredSession, type TokenStore, type TokenStoreKind } from './types.js';
import { importPackage } from '../esm.js';

/** The subset of keytar's API plat uses, so tests and other backends can stand in for the native module. */
export interface KeytarApi {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
  findCredentials(service: string): Promise<Array<{ account: string; password: string }>>;
}

export type KeytarLoader = () => Promise<KeytarApi>;

const KEYCHAIN_SERVICE = 'plat';
export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 5_000;

/**
 * The OS keychain cannot be used right now: the native module does not load, there is no Secret Service on the
 * session bus, or it did not answer in time (a locked keychain whose unlock prompt nobody sees). `reason` is short
 * and never contains a secret.
 */
export class KeychainUnavailableError extends PlatError {
  readonly reason: string;
  /**
   * The keychain did not answer in time. The native call is still pending on libuv's thread pool and keeps the
   * event loop alive, so the process must end with process.exit() rather than wait for the loop to drain.
   */
  readonly timedOut: boolean;
  constructor(reason: string, options?: { cause?: unknown; timedOut?: boolean; hint?: string }) {
    super(
      `The OS keychain is not available (${reason}). ${options?.hint ?? 'Set PLAT_TOKEN_STORE=file to keep tokens in a 0600 file instead.'}`,
      ExitCode.failure,
      options?.cause !== undefined ? { cause: options.cause } : undefined,
    );
    this.name = 'KeychainUnavailableError';
    this.reason = reason;
    this.timedOut = options?.timedOut ?? false;
  }
}

/**
 * Loads @github/keytar on demand: it is a native module, slow to load and absent on some machines, and commands
 * that never touch the keychain must not pay for it. Any failure becomes a KeychainUnavailableError.
 */
export async function loadKeytar(): Promise<KeytarApi> {
  let mod: unknown;
  try {
    mod = await loadKeytarModule();
  } catch (error) {
    throw new KeychainUnavailableError(`cannot load @github/keytar: ${shortReason(error)}`, { cause: error });
  }
  const api = pickKeytarApi(mod);
  if (!api) throw new KeychainUnavailableError('@github/keytar does not export the expected functions');
  return api;
}

/**
 * keytar is a CommonJS package: require() loads it 5–6 ms sooner than import(), which first starts Node's ES module
 * loader. The bundle is CommonJS with its own path as __filename, so a require made for that file resolves plat's
 * node_modules; where there is no __filename (plain ES modules), import() does the same job.
 */
async function loadKeytarModule(): Promise<unknown> {
  if (typeof __filename === 'string' && __filename !== '') return (process.getBuiltinModule('node:module') as { createRequire: typeof import('node:module').createRequire }).createRequire(__filename)('@github/keytar');
  return importPackage('@github/keytar');
}

/** keytar is CommonJS: its functions arrive on the default export, or as named exports through a bundler. */
export function pickKeytarApi(mod: unknown): KeytarApi | undefined {
  const candidates = [(mod as { default?: unknown } | null)?.default, mod];
  for (const candidate of candidates) {
    if (isKeytarApi(candidate)) return candidate;
  }
  return undefined;
}

function isKeytarApi(value: unknown): value is KeytarApi {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['getPassword', 'setPassword', 'deletePassword', 'findCredentials'].every((f) => typeof v[f] === 'function');
}

export interface KeychainTokenStoreOptions {
  /** The keychain service name; tests use their own so they never touch a real user's entries. */
  service?: string;
  /**
   * Set when plat runs with a non-default config dir (PLAT_CONFIG_DIR): accounts become `<profile>@<namespace>`, so
   * two config dirs never share, or log each other out of, one keychain entry.
   */
  namespace?: string;
  /** How long one keychain call may take before plat gives up on it. */
  timeoutMs?: number;
  platform?: NodeJS.Platform;
  /**
   * Reads entries without keytar where it can (the Secret Service over D-Bus, see secret-service.ts); keytar is
   * loaded only for what this cannot answer, and for every write.
   */
  readSecret?: SecretReader;
  /** The bus connections `readSecret` leaves open (a one-shot process's), closed or let go by release(). */
  connections?: BusConnections;
}

/**
 * Sessions in the OS keychain through keytar: service `plat`, account = profile name, password = the JSON of the
 * whole StoredSession, so one read returns tokens and expiry that belong together.
 */
export class KeychainTokenStore implements TokenStore {
  readonly kind: TokenStoreKind = 'keychain';
  readonly location: string;
  readonly service: string;
  private readonly timeoutMs: number;
  private readonly namespace: string | undefined;
  private readonly load: KeytarLoader;
  private readonly readSecret: SecretReader | undefined;
  private readonly connections: BusConnections | undefined;
  private api: Promise<KeytarApi> | undefined;

  /** `keytar` is the API itself or a loader called on first use (see loadKeytar). */
  constructor(keytar: KeytarApi | KeytarLoader, options: KeychainTokenStoreOptions = {}) {
    this.load = typeof keytar === 'function' ? keytar : async () => keytar;
    this.service = options.service ?? KEYCHAIN_SERVICE;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
    this.namespace = options.namespace;
    this.readSecret = options.readSecret;
    this.connections = options.connections;
    this.location = keychainDescription(options.platform ?? process.platform);
  }

  async get(profile: string): Promise<StoredSession | undefined> {
    const account = this.accountOf(profile);
    const stored = await this.call('read', async (keytar, signal) => {
      const read = await this.readDirectly(account, signal);
      return read !== undefined ? read : (await keytar()).getPassword(this.service, account);
    });
    if (stored === null || stored === undefined) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(stored);
    } catch {
      data = undefined;
    }
    if (!isStoredSession(data)) {
      throw new DamagedDataError(
        `The session stored in the OS keychain for profile ${account} (service "${this.service}") is damaged. ` +
          `Run \`plat login --profile ${account}\` again.`,
      );
    }
    return data;
  }

  async set(profile: string, session: StoredSession): Promise<void> {
    const account = this.accountOf(profile);
    const password = JSON.stringify(session);
    await this.call('write', async (keytar) => (await keytar()).setPassword(this.service, account, password));
  }

  async delete(profile: string): Promise<void> {
    const account = this.accountOf(profile);
    // keytar answers false for an entry that is not there: deleting nothing is not an error.
    await this.call('delete', async (keytar) => (await keytar()).deletePassword(this.service, account));
  }

  /**
   * Writes and removes a throwaway entry. A locked Secret Service collection answers reads with nothing (libsecret
   * cannot unlock it without a prompt), exactly as if the entry were gone; a write, though, fails with "locked".
   * So when a read finds nothing, this tells "gone" from "out of reach": saying "not logged in" (or forgetting the
   * session) about a session in a locked keychain would be wrong.
   */
  async assertWritable(profile: string): Promise<void> {
    const probe = `${this.accountOf(profile)}.probe`;
    try {
      await this.call('write', async (keytar) => (await keytar()).setPassword(this.service, probe, 'plat checks whether the keychain is unlocked'));
      await this.call('delete', async (keytar) => (await keytar()).deletePassword(this.service, probe));
    } catch (error) {
      if (!(error instanceof KeychainUnavailableError) || !/locked/i.test(error.reason)) throw error;
      throw new KeychainUnavailableError('it is locked', {
        cause: error,
        hint: 'Unlock it (sign in to your desktop session, or unlock the "login" keyring) and run the command again; nothing kept there is lost.',
      });
    }
  }

  release(options?: { exiting?: boolean }): void {
    this.connections?.release(options);
  }

  accountOf(profile: string): string {
    const name = validateProfileName(profile);
    return this.namespace ? `${name}@${this.namespace}` : name;
  }

  /** The profiles that have an entry under this service (never returns the secrets themselves). */
  async accounts(): Promise<string[]> {
    const found = await this.call('listing', async (keytar) => (await keytar()).findCredentials(this.service));
    return found.map((credential) => credential.account).sort();
  }

  /**
   * The entry read without keytar, or undefined when keytar must answer (no direct reader, a locked or ambiguous
   * entry, any failure: keytar then reports problems in its own words, as it always has).
   */
  private async readDirectly(account: string, signal: AbortSignal): Promise<string | null | undefined> {
    if (!this.readSecret) return undefined;
    try {
      return await this.readSecret(this.service, account, signal);
    } catch {
      // The deadline passed: the caller has already given up, keytar must not be started now.
      if (signal.aborted) throw signal.reason;
      return undefined;
    }
  }

  private api$(): Promise<KeytarApi> {
    this.api ??= this.load().catch((error: unknown) => {
      throw error instanceof KeychainUnavailableError
        ? error
        : new KeychainUnavailableError(`cannot load the keychain module: ${shortReason(error)}`, { cause: error });
    });
    return this.api;
  }

  /**
   * One keychain operation with a deadline. keytar's native call cannot be cancelled; plat stops waiting for it and
   * reports the keychain as unavailable (with `timedOut` set, see KeychainUnavailableError). A direct read is
   * cancelled through the signal.
   */
  private async call<T>(what: string, operation: (keytar: () => Promise<KeytarApi>, signal: AbortSignal) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const stop = new AbortController();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        stop.abort();
        const seconds = Math.round(this.timeoutMs / 100) / 10;
        reject(
          new KeychainUnavailableError(
            `no answer to a ${what} within ${seconds} s; it may be locked and waiting for an unlock prompt`,
            { timedOut: true },
          ),
        );
      }, this.timeoutMs);
    });
    try {
      // keytar is loaded inside the deadline, and only when the operation asks for it.
      return await Promise.race([Promise.resolve().then(() => operation(() => this.api$(), stop.signal)), deadline]);
    } catch (error) {
      if (error instanceof KeychainUnavailableError) throw error;
      throw new KeychainUnavailableError(shortReason(error), { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}

function keychainDescription(platform: NodeJS.Platform): string {
  switch (platform) {
    case 'darwin':
      return 'macOS Keychain';
    case 'win32':
      return 'Windows Credential Manager';
    default:
      return 'OS keychain (Secret Service)';
  }
}

/** The first line of an error's message, bounded: errors from native code can be long, and are never secrets. */
function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = (message.split('\n')[0] ?? '').trim().replace(/\.$/, '');
  return line.length > 200 ? `${line.slice(0, 197)}...` : line || 'unknown error';
}
