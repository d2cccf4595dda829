import { promises as fs } from 'node:fs';
import { basename, join } from 'node:path';
import { PlatError } from '../errors.js';
import { assertTrusted, corruptFileError, DamagedDataError, ensurePrivateDir, readJsonFile, storageError, writeFileAtomic } from './atomic.js';
import { profilePath, profilesDir, validateProfileName } from './paths.js';
import type { Profile } from './types.js';

/** A profile file that exists but cannot be used; `plat status` shows it instead of failing the whole listing. */
interface BrokenProfile {
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

  private trusted = false;

  /** Checked once per process: the config dir and the profiles dir are the user's own and closed to others. */
  private assertTrustedDirs(): void {
    if (this.trusted) return;
    assertTrusted(this.configDir, 'directory');
    assertTrusted(this.dir, 'directory');
    this.trusted = true;
  }

  /** The file that holds a profile (whether or not it exists). */
  pathOf(name: string): string {
    return profilePath(this.configDir, name);
  }

  /** `ignoreDamaged`: a damaged file reads as no profile (for a login, which replaces it). */
  async load(name: string, options: { ignoreDamaged?: boolean } = {}): Promise<Profile | undefined> {
    const file = this.pathOf(name);
    this.assertTrustedDirs();
    assertTrusted(file, 'file');
    try {
      const data = await readJsonFile(file, { fix: PROFILE_FIX });
      if (data === undefined) return undefined;
      return toProfile(data, name, file);
    } catch (error) {
      if (options.ignoreDamaged && error instanceof DamagedDataError) return undefined;
      throw error;
    }
  }

  async save(profile: Profile): Promise<void> {
    const file = this.pathOf(profile.name);
    await ensurePrivateDir(this.configDir);
    await ensurePrivateDir(this.dir);
    await writeFileAtomic(file, `${JSON.stringify(profile, null, 2)}\n`, 0o600);
  }

  /**
   * Fails with the storage error a save would meet (an unwritable or read-only config dir), without changing
   * anything: a login checks this before it asks anyone to approve, rather than lose the tokens afterwards.
   */
  async assertWritable(name: string): Promise<void> {
    await ensurePrivateDir(this.configDir);
    await ensurePrivateDir(this.dir);
    // Named like a temporary file of the profile's own writes, so one left by a killed plat is swept with them.
    const probe = join(this.dir, `.${basename(this.pathOf(name))}.${process.pid}.write-check.tmp`);
    try {
      await (await fs.open(probe, 'wx', 0o600)).close();
    } catch (error) {
      throw storageError(this.dir, error, 'write in');
    }
    await fs.rm(probe, { force: true }).catch(() => undefined);
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
    this.assertTrustedDirs();
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
        broken.push({ name, file: join(this.dir, `${name}.json`), error });
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
  if (!isProfileShape(data)) throw corruptFileError(file, 'does not hold a profile', PROFILE_FIX);
  // The file name is authoritative: a copied or renamed file belongs to the profile it is now named after.
  return { ...(data as Partial<Profile>), name };
}

/**
 * The members plat reads have the types it expects (each may be absent): a hand-edited `"scopes": "openid"` or
 * `"baseUrl": 42` is a damaged profile with a sentence, not a crash somewhere later.
 */
function isProfileShape(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const p = data as Record<string, unknown>;
  const optional = (value: unknown, check: (v: unknown) => boolean) => value === undefined || check(value);
  const string = (v: unknown) => typeof v === 'string';
  const url = (v: unknown) => {
    const protocol = typeof v === 'string' ? URL.parse(v)?.protocol : undefined;
    return protocol === 'http:' || protocol === 'https:';
  };
  const strings = (v: unknown) => Array.isArray(v) && v.every(string);
  const object = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  return (
    optional(p.baseUrl, url) &&
    optional(p.issuer, url) &&
    optional(p.resource, string) &&
    optional(p.scopes, strings) &&
    optional(p.expiresAt, (v) => typeof v === 'number') &&
    optional(p.updatedAt, (v) => typeof v === 'number') &&
    optional(p.loggedIn, (v) => typeof v === 'boolean') &&
    optional(p.tokenStore, (v) => v === 'keychain' || v === 'file') &&
    optional(p.user, (v) => object(v) && string(v.sub)) &&
    optional(p.client, (v) => object(v) && string(v.clientId) && strings(v.redirectUris) && string(v.issuer))
  );
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
