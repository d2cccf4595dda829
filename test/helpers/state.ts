/**
 * The one set of readers for what plat leaves on disk in a test home (PLAT_TOKEN_STORE=file, the test default):
 * paths, the parsed profile and session, and every file with its text for "nothing leaked" and "nothing changed"
 * checks.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Home } from './cli.js';

export const profilePath = (home: Home, name = 'default') => path.join(home.configDir, 'profiles', `${name}.json`);
export const tokenPath = (home: Home, name = 'default') => path.join(home.configDir, 'tokens', `${name}.json`);
export const lockPath = (home: Home, name = 'default') => path.join(home.configDir, 'locks', `${name}.lock`);

async function readJsonOrUndefined(file: string): Promise<Record<string, any> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON (a torn write?):\n${text}`);
  }
}

/** The profile file, parsed; fails the test when it is missing or torn. */
export async function readProfile(home: Home, name = 'default'): Promise<Record<string, any>> {
  const profile = await readJsonOrUndefined(profilePath(home, name));
  if (!profile) throw new Error(`profile ${name} has no file at ${profilePath(home, name)}`);
  return profile;
}

/** The file-store session of a profile, parsed; fails the test when it is missing or torn. */
export async function readStoredSession(home: Home, name = 'default'): Promise<Record<string, any>> {
  const session = await readJsonOrUndefined(tokenPath(home, name));
  if (!session) throw new Error(`profile ${name} has no stored session at ${tokenPath(home, name)}`);
  return session;
}

export interface SessionState {
  profile: Record<string, any> | undefined;
  session: Record<string, any> | undefined;
}

/** The profile file and the file-store session, parsed, each undefined when absent; a torn file fails the test. */
export async function readState(home: Home, name = 'default'): Promise<SessionState> {
  return { profile: await readJsonOrUndefined(profilePath(home, name)), session: await readJsonOrUndefined(tokenPath(home, name)) };
}

/** Byte-for-byte contents of the session files (profile, tokens), for "nothing changed" checks. */
export async function sessionBytes(home: Home, name = 'default'): Promise<{ profile: string | null; tokens: string | null }> {
  const read = (file: string) => readFile(file, 'utf8').catch(() => null);
  return { profile: await read(profilePath(home, name)), tokens: await read(tokenPath(home, name)) };
}

/** Every file under `dir`, relative to it, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/**
 * Every file under `dir` (relative path) with its bytes as latin1 text: each byte one character, so binary files
 * are read too and a secret (ASCII) is found in any of them.
 */
export async function filesWithText(dir: string): Promise<Array<{ file: string; text: string }>> {
  const files = await listFiles(dir);
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(path.join(dir, file), 'latin1').catch(() => '') })));
}

/** The profile and token files of a home (not the metadata cache or lock files), relative to its config dir. */
export async function sessionFiles(home: Home): Promise<string[]> {
  return (await listFiles(home.configDir)).filter((f) => !f.startsWith(`cache${path.sep}`) && !f.startsWith(`locks${path.sep}`));
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
