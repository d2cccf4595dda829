/**
 * Every side effect a command needs, built once per invocation and passed down: environment, streams, clock,
 * cancellation, config dir, stores, HTTP, browser. Heavy pieces are created on first use so a command pays only for
 * what it touches (`plat --version` touches nothing).
 */
import type * as os from 'node:os';
import type { BrowserResult } from './terminal/browser.js';
import type { Http } from './http/index.js';
import type { IO } from './terminal/io.js';
import type { KnownSecrets } from './redact.js';
import type { ProfileStore } from './store/profiles.js';
import type { TokenStore, TokenStoreKind } from './store/types.js';

export interface Globals {
  baseUrl?: string;
  profile: string;
  /** The profile `plat switch` made current, if any: what a command without --profile/PLAT_PROFILE acts on. */
  currentProfile?: string;
  /** Where `profile` came from: --profile, PLAT_PROFILE, plat switch, or none of them. */
  profileSource?: 'option' | 'env' | 'switch' | 'default';
  json: boolean;
  verbose: boolean;
  /** plat may ask a question (a step-up) where a person can answer: not with --no-prompt or PLAT_NO_PROMPT=1. */
  prompt?: boolean;
}

export interface Context {
  readonly env: Record<string, string | undefined>;
  readonly io: IO;
  readonly globals: Globals;
  readonly version: string;
  readonly signal: AbortSignal;
  readonly configDir: string;
  /** The secrets this invocation holds, which its IO scrubs from what it prints: the IO's own set (io.secrets). */
  readonly secrets: KnownSecrets;
  now(): number;
  hostname(): string;
  profiles(): Promise<ProfileStore>;
  /** `quietFallback`: the automatic choice falls back to the file without its warning (said once before). */
  tokenStore(recordedKind?: TokenStoreKind, options?: { quietFallback?: boolean }): Promise<TokenStore>;
  http(): Promise<Http>;
  openUrl(url: string): Promise<BrowserResult>;
  /** Runs `fn` holding the cross-process lock of a profile (waiting up to `timeoutMs`, default 30 s, for it). */
  withLock<T>(profile: string, fn: () => Promise<T>, options?: { timeoutMs?: number }): Promise<T>;
  /**
   * Releases what the invocation opened (HTTP connections), so the process can exit at once. `exiting`: it is
   * about to (main.ts), and idle connections end with it.
   */
  dispose(options?: { exiting?: boolean }): Promise<void>;
}

export interface ContextOptions {
  env: Record<string, string | undefined>;
  io: IO;
  globals: Globals;
  version: string;
  signal: AbortSignal;
  configDir: string;
  /** Where the config dir would be without PLAT_CONFIG_DIR: sessions there get plain keychain account names. */
  defaultConfigDir?: string;
  now?: () => number;
  /**
   * The process ends with this invocation and disposes of the context (main.ts): what its token stores keep open
   * is then released all at once by dispose() (TokenStore.release). Contexts that are never disposed (the
   * library's) release each as it goes.
   */
  oneShot?: boolean;
}

export function createContext(options: ContextOptions): Context {
  const { env, io, globals, signal, configDir } = options;
  const now = options.now ?? Date.now;
  let http: Promise<Http> | undefined;
  let profiles: Promise<ProfileStore> | undefined;
  const tokenStores: TokenStore[] = [];
  const ctx: Context = {
    env,
    io,
    globals,
    version: options.version,
    signal,
    configDir,
    // The set io scrubs with, so what the session layer remembers is scrubbed from what the invocation prints.
    secrets: io.secrets,
    now,
    // node:os only for the one command that names this machine (login's client name).
    hostname: () => (process.getBuiltinModule('node:os') as typeof os).hostname(),
    profiles: () =>
      (profiles ??= import('./store/profiles.js').then(({ ProfileStore }) => new ProfileStore(configDir))),
    tokenStore: async (recordedKind, storeOptions) => {
      const { openTokenStore } = await import('./store/select.js');
      const store = openTokenStore({
        oneShot: options.oneShot,
        env,
        configDir,
        recordedKind,
        warn: (message: string) => {
          if (!storeOptions?.quietFallback) io.warn(message);
        },
        keychainNamespace: options.defaultConfigDir === configDir ? undefined : configDir,
      });
      if (options.oneShot) tokenStores.push(store);
      return store;
    },
    http: () =>
      (http ??= import('./http/index.js').then(({ createHttp }) =>
        createHttp({ io, env, verbose: globals.verbose, userAgent: `plat/${options.version}`, now, signal }),
      )),
    openUrl: async (url) => {
      const { openUrl } = await import('./terminal/browser.js');
      return openUrl(url, env);
    },
    withLock: async (profile, fn, lockOptions) => {
      const { withProfileLock } = await import('./store/lock.js');
      return withProfileLock(configDir, profile, fn, { ...lockOptions, signal });
    },
    dispose: async (disposeOptions) => {
      for (const store of tokenStores.splice(0)) store.release?.(disposeOptions);
      if (http) await (await http).close(disposeOptions).catch(() => {});
    },
  };
  return ctx;
}

