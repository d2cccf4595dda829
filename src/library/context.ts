/**
 * The Context the library hands the session layer: the command's own stores, lock, HTTP client and environment,
 * built without commander, chalk or ora, and without process-wide handlers (the program using the library owns
 * its signals and its exit).
 */
import { homedir } from 'node:os';
import { createContext, type Context } from '../context.js';
import { invocationOf, normaliseBaseUrl } from '../session/index.js';
import { KnownSecrets } from '../redact.js';
import { libraryIO } from './io.js';

declare const PLAT_VERSION: string;
const version = typeof PLAT_VERSION === 'string' ? PLAT_VERSION : '0.0.0-dev';

export interface LibrarySettings {
  profile: string;
  currentProfile?: string;
  profileSource: 'option' | 'env' | 'switch' | 'default';
  baseUrl?: string;
  configDir: string;
  defaultConfigDir: string;
  onWarning?: (message: string) => void;
  /**
   * The client's secrets, shared by the contexts of all its calls (one per call) and kept bounded over its refreshes
   * (KnownSecrets): what it warns of and the errors it throws are scrubbed of them.
   */
  secrets: KnownSecrets;
}

/**
 * The same choices main.ts makes for the command, and the same usage errors: the profile is the option, then
 * PLAT_PROFILE, then the one `plat switch` made current, then `default`.
 */
export function librarySettings(options: { profile?: string; baseUrl?: string; onWarning?: (message: string) => void }): LibrarySettings {
  const { configDir, defaultConfigDir, profile, currentProfile, profileSource } = invocationOf(process.env, { profile: options.profile, home: homedir() });
  const baseUrl = options.baseUrl === undefined ? undefined : normaliseBaseUrl(options.baseUrl);
  return { profile, currentProfile, profileSource, baseUrl, configDir, defaultConfigDir, onWarning: options.onWarning, secrets: new KnownSecrets() };
}

/** One per call: its signal is the caller's (init.signal), so aborting a fetch also ends a wait for the lock. */
export function libraryContext(settings: LibrarySettings, signal: AbortSignal = new AbortController().signal): Context {
  const env = process.env;
  return createContext({
    env,
    io: libraryIO(settings.secrets, settings.onWarning),
    globals: {
      profile: settings.profile,
      currentProfile: settings.currentProfile,
      profileSource: settings.profileSource,
      baseUrl: settings.baseUrl,
      json: false,
      verbose: env.PLAT_DEBUG === '1',
    },
    version,
    signal,
    configDir: settings.configDir,
    defaultConfigDir: settings.defaultConfigDir,
  });
}
