import fs from 'node:fs/promises';
import path from 'node:path';
import { PlatError } from '../errors.js';
import { corruptFileError, ensurePrivateDir, readJsonFile, storageError, writeFileAtomic } from './atomic.js';
import { profilePath, profilesDir, validateProfileName } from './paths.js';
import type { Profile } from './types.js';

/** A profile file that exists but cannot be used; `plat status` shows it instead of failing the whole listing. */
export interface BrokenProfile {
  name: string;
  file: string;
  error: PlatError;
}

export interface ProfileScan {
  profiles: Profile[];
  broken: BrokenProfile[];
}

export interface ProfileStoreOptions {
  /** Told about each profile file `list()` skips; the session prints it on stderr. */
  warn?: (message: string) => void;
}

const PROFILE_FIX = 'Delete it, or run `plat login` for this profile again.';

/**
 * Non-secret per-profile state, one `profiles/<name>.json` each (0600 in a 0700 directory: it names the user and
 * the client). Writes are atomic, so a crash never leaves half a profile behind.
 */
export class ProfileStore {
  readonly dir: string;

  constructor(
    readonly configDir: string,
    private readonly options: ProfileStoreOptions = {},
  ) {
    this.dir = profilesDir(configDir);
  }

  /** The file that holds a profile (whether or not it exists). */
  pathOf(name: string): string {
    return profilePath(this.configDir, name);
  }

  async load(name: string): Promise<Profile | undefined> {
    const file = this.pathOf(name);
    const data = await readJsonFile(file, { fix: PROFILE_FIX });
    if (data === undefined) return undefined;
    return toProfile(data, name, file);
  }

  async save(profile: Profile): Promise<void> {
    const file = this.pathOf(profile.name);
    await ensurePrivateDir(this.configDir);
    await ensurePrivateDir(this.dir);
    await writeFileAtomic(file, `${JSON.stringify(profile, null, 2)}\n`, 0o600);
  }

  /** Every readable profile, sorted by name; unreadable ones are skipped with a warning. */
  async list(): Promise<Profile[]> {
    const { profiles, broken } = await this.scan();
    for (const { error } of broken) this.options.warn?.(`Skipping a damaged profile: ${error.message}`);
    return profiles;
  }

  /** Every profile file, sorted by name: the usable ones and, separately, the damaged ones. */
  async scan(): Promise<ProfileScan> {
    let entries: string[];
    try {
      entries = await fs.readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: [], broken: [] };
      throw storageError(this.dir, error, 'read');
    }
    const names = entries
      .filter((entry) => entry.endsWith('.json'))
      .map((entry) => entry.slice(0, -'.json'.length))
      .filter(isValidProfileName)
      .sort(compareNames);

    const profiles: Profile[] = [];
    const broken: BrokenProfile[] = [];
    for (const name of names) {
      try {
        const profile = await this.load(name);
        // Deleted between readdir and read: simply not there any more.
        if (profile) profiles.push(profile);
      } catch (error) {
        if (!(error instanceof PlatError)) throw error;
        broken.push({ name, file: path.join(this.dir, `${name}.json`), error });
      }
    }
    return { profiles, broken };
  }

  /** Removes the profile file; deleting a profile that does not exist is not an error. */
  async delete(name: string): Promise<void> {
    const file = this.pathOf(name);
    try {
      await fs.rm(file, { force: true });
    } catch (error) {
      throw storageError(file, error, 'delete');
    }
  }
}

function toProfile(data: unknown, name: string, file: string): Profile {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw corruptFileError(file, 'does not hold a profile', PROFILE_FIX);
  }
  // The file name is authoritative: a copied or renamed file belongs to the profile it is now named after.
  return { ...(data as Partial<Profile>), name };
}

function isValidProfileName(name: string): boolean {
  try {
    validateProfileName(name);
    return true;
  } catch {
    return false;
  }
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
