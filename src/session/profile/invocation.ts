/**
 * Which profile and config dir an invocation acts on, resolved one way for the CLI (main.ts), the library
 * (library/context.ts) and the in-process tests (testContext): the config dir from PLAT_CONFIG_DIR or the platform's
 * default; the profile from the option, then PLAT_PROFILE, then the one `plat switch` made current, then `default`.
 * A bad profile name or PLAT_TOKEN_STORE value is a usage error here, whatever the command.
 */
import type { Globals } from '../../context.js';
import { readCurrentProfile } from '../../store/current-profile.js';
import { platformConfigDir, resolveConfigDir, validateProfileName } from '../../store/paths.js';
import { parseTokenStoreEnv } from '../../store/select.js';

export interface Invocation {
  configDir: string;
  /** Where the config would be without PLAT_CONFIG_DIR: keychain entries are namespaced when the two differ. */
  defaultConfigDir: string;
  profile: string;
  currentProfile?: string;
  profileSource: NonNullable<Globals['profileSource']>;
}

export function resolveInvocation(
  env: Record<string, string | undefined>,
  options: { profile?: string; home: string; platform?: NodeJS.Platform; configDir?: string },
): Invocation {
  const platform = options.platform ?? process.platform;
  const configDir = options.configDir ?? resolveConfigDir(env, platform, options.home);
  const currentProfile = readCurrentProfile(configDir);
  const profileSource = options.profile ? 'option' : env.PLAT_PROFILE ? 'env' : currentProfile ? 'switch' : 'default';
  const profile = validateProfileName(options.profile || env.PLAT_PROFILE || currentProfile || 'default');
  parseTokenStoreEnv(env.PLAT_TOKEN_STORE);
  // Not resolveConfigDir on a copy of env without PLAT_CONFIG_DIR: copying the environment costs ~20 KiB of young
  // allocation on every start, where a plain call has a few KiB to spare before V8's first scavenge (src/README.md).
  const defaultConfigDir = platformConfigDir(env, platform, options.home);
  return { configDir, defaultConfigDir, profile, currentProfile, profileSource };
}
