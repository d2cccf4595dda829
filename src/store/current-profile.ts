/**
 * The profile `plat switch` made current: one line in `<config>/current-profile`. Read synchronously at start-up
 * (a missing file costs one stat and builds no Error: store/read-if-present.ts), before the command is known,
 * because every command's profile depends on it when neither --profile nor PLAT_PROFILE names one.
 */
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { readTextIfPresent } from './read-if-present.js';
import { validateProfileName } from './paths.js';

function currentProfilePath(configDir: string): string {
  return join(configDir, 'current-profile');
}

/** The switched-to profile, or undefined when there is none (never switched, or the file was removed). */
export function readCurrentProfile(configDir: string): string | undefined {
  const file = currentProfilePath(configDir);
  let text: string | undefined;
  try {
    text = readTextIfPresent(file);
  } catch {
    // Unreadable: the default profile applies, as before any switch.
    return undefined;
  }
  // Absent: the usual case.
  const name = text?.trim();
  if (!name) return undefined;
  try {
    return validateProfileName(name);
  } catch {
    throw new UsageError(`${file} does not hold a profile name. Run plat switch <profile> to choose one, or delete the file.`);
  }
}

// Writing is rare (plat switch, plat logout --forget): its modules load then, not at every start-up.
export async function writeCurrentProfile(configDir: string, name: string): Promise<void> {
  const { ensurePrivateDir, writeFileAtomic } = await import('./atomic.js');
  await ensurePrivateDir(configDir);
  await writeFileAtomic(currentProfilePath(configDir), `${validateProfileName(name)}\n`, 0o600);
}

/** Back to the default profile (used when the current profile is deleted). */
export async function clearCurrentProfile(configDir: string): Promise<void> {
  const file = currentProfilePath(configDir);
  const { storageError } = await import('./atomic.js');
  try {
    await fsp.rm(file, { force: true });
  } catch (error) {
    throw storageError(file, error, 'delete');
  }
}
