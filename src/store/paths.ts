import { join, posix, win32 } from 'node:path';
import { UsageError } from '../errors.js';

/** The environment variables this module looks at; pass `process.env` (or a test's own object). */
export type Env = Record<string, string | undefined>;

/**
 * Where plat keeps its non-secret state. `PLAT_CONFIG_DIR` wins; otherwise the platform's convention:
 * `$XDG_CONFIG_HOME/plat` (or `~/.config/plat`) on Linux and other Unixes, `~/Library/Application Support/plat` on
 * macOS, `%APPDATA%\plat` on Windows.
 *
 * @see https://specifications.freedesktop.org/basedir-spec/latest/
 */
export function resolveConfigDir(
  env: Env,
  platform: NodeJS.Platform = process.platform,
  homedir: string,
): string {
  return nonEmpty(env.PLAT_CONFIG_DIR) ?? platformConfigDir(env, platform, homedir);
}

/** Where the config is without PLAT_CONFIG_DIR: the platform's own place for it. */
export function platformConfigDir(env: Env, platform: NodeJS.Platform, homedir: string): string {
  if (platform === 'win32') {
    const appData = nonEmpty(env.APPDATA) ?? win32.join(homedir, 'AppData', 'Roaming');
    return win32.join(appData, 'plat');
  }
  if (platform === 'darwin') {
    return posix.join(homedir, 'Library', 'Application Support', 'plat');
  }
  // The basedir spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const xdg = nonEmpty(env.XDG_CONFIG_HOME);
  const base = xdg && posix.isAbsolute(xdg) ? xdg : posix.join(homedir, '.config');
  return posix.join(base, 'plat');
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/** `<config>/profiles`: one JSON file of non-secret state per profile. */
export function profilesDir(configDir: string): string {
  return join(configDir, 'profiles');
}

export function profilePath(configDir: string, profile: string): string {
  return join(profilesDir(configDir), `${validateProfileName(profile)}.json`);
}

/** `<config>/tokens`: the 0600 file fallback for sessions when no OS keychain is used. */
export function tokensDir(configDir: string): string {
  return join(configDir, 'tokens');
}

export function tokenFilePath(configDir: string, profile: string): string {
  return join(tokensDir(configDir), `${validateProfileName(profile)}.json`);
}

/** `<config>/locks`: cross-process lock directories, one per profile. */
export function locksDir(configDir: string): string {
  return join(configDir, 'locks');
}

/** The path proper-lockfile locks for a profile; the lock itself is the directory `<this>.lock`. */
export function lockTargetPath(configDir: string, profile: string): string {
  return join(locksDir(configDir), validateProfileName(profile));
}

/** `<config>/cache`: things that can be thrown away and fetched again (discovery documents). */
export function cacheDir(configDir: string): string {
  return join(configDir, 'cache');
}

const PROFILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/**
 * Profile names become file names, so they are kept to a portable, traversal-free alphabet.
 * Returns the name so it can be used inline.
 */
export function validateProfileName(name: string): string {
  // A start checks the same name several times; V8 compiles a regular expression run twice to machine code (~0.1 ms).
  if (name === lastValidProfileName) return name;
  if (typeof name !== 'string' || !PROFILE_NAME.test(name)) {
    const shown = typeof name === 'string' ? JSON.stringify(name.length > 70 ? `${name.slice(0, 67)}...` : name) : String(name);
    throw new UsageError(
      `Invalid profile name ${shown}: use 1 to 64 letters, digits, '.', '_' or '-', not starting with a dot.`,
    );
  }
  lastValidProfileName = name;
  return name;
}

let lastValidProfileName: string | undefined;

/**
 * A short, stable file-name key for a URL in cache/ (FNV-1a, 64 bits as hex). Not a security boundary: every cache
 * entry stores the URL it is for and is ignored when that differs. (node:crypto would cost start-up time here.)
 */
export function cacheKey(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return `${h1.toString(16).padStart(8, '0')}${h2.toString(16).padStart(8, '0')}`;
}
