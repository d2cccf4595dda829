import { promises as fs } from 'node:fs';
import { assertTrusted, corruptFileError, ensurePrivateDir, readJsonFile, removeStaleTemps, storageError, writeFileAtomic } from './atomic.js';
import { tokenFilePath, tokensDir } from './paths.js';
import { isStoredSession, type StoredSession, type TokenStore, type TokenStoreKind } from './types.js';

const FILE_MODE = 0o600;

export interface FileTokenStoreOptions {
  /** Unix permission bits are meaningless on Windows (ACLs protect the profile dir there). */
  platform?: NodeJS.Platform;
}

/**
 * Sessions as `tokens/<profile>.json`, mode 0600 in a 0700 directory, replaced atomically: the fallback when no OS
 * keychain is available, and the explicit choice with PLAT_TOKEN_STORE=file.
 */
export class FileTokenStore implements TokenStore {
  readonly kind: TokenStoreKind = 'file';
  readonly location: string;
  private readonly unixModes: boolean;

  constructor(
    readonly configDir: string,
    options: FileTokenStoreOptions = {},
  ) {
    this.location = tokensDir(configDir);
    this.unixModes = (options.platform ?? process.platform) !== 'win32';
  }

  /** The file that holds a profile's session. */
  pathOf(profile: string): string {
    return tokenFilePath(this.configDir, profile);
  }

  async get(profile: string): Promise<StoredSession | undefined> {
    const file = this.pathOf(profile);
    assertTrusted(this.configDir, 'directory');
    assertTrusted(this.location, 'directory');
    const info = assertTrusted(file, 'file');
    const data = await readJsonFile(file);
    if (data === undefined) return undefined;
    if (!isStoredSession(data)) throw corruptFileError(file, 'does not hold a plat session');
    if (this.unixModes && info && (info.mode & 0o777 & ~FILE_MODE) !== 0) await this.tighten(file);
    return data;
  }

  async set(profile: string, session: StoredSession): Promise<void> {
    const file = this.pathOf(profile);
    await ensurePrivateDir(this.configDir);
    await ensurePrivateDir(this.location);
    await writeFileAtomic(file, `${JSON.stringify(session)}\n`, FILE_MODE);
  }

  async delete(profile: string): Promise<void> {
    const file = this.pathOf(profile);
    try {
      await fs.rm(file, { force: true });
    } catch (error) {
      throw storageError(file, error, 'delete');
    }
    await removeStaleTemps(file);
  }

  /** A token file someone loosened (a copy, a restore from backup) is still read, and closed again. */
  private async tighten(file: string): Promise<void> {
    try {
      await fs.chmod(file, FILE_MODE);
    } catch {
      // Not ours to fix (owned by another user, read-only mount): reading it still works.
    }
  }
}
