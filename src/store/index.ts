/** The store layer's public surface: what session/ and main.ts import. */
export type { ClientRegistration, Profile, ProfileUser, StoredSession, TokenStore, TokenStoreKind } from './types.js';
export {
  cacheDir,
  lockTargetPath,
  locksDir,
  profilePath,
  profilesDir,
  resolveConfigDir,
  tokenFilePath,
  tokensDir,
  validateProfileName,
  type Env,
} from './paths.js';
export { ensurePrivateDir, readJsonFile, writeFileAtomic } from './atomic.js';
export { ProfileStore, type BrokenProfile, type ProfileScan, type ProfileStoreOptions } from './profiles.js';
export { FileTokenStore } from './file-store.js';
export {
  KEYCHAIN_SERVICE,
  KeychainTokenStore,
  KeychainUnavailableError,
  loadKeytar,
  type KeytarApi,
  type KeytarLoader,
} from './keychain.js';
export { AutoTokenStore, openTokenStore, parseTokenStoreEnv, type OpenTokenStoreOptions } from './select.js';
export { withProfileLock, type ProfileLockOptions } from './lock.js';
