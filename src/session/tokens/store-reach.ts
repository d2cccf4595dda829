/**
 * A profile's session lives in the store the profile recorded at login. A run that cannot reach that store says
 * so with exit 4 and leaves the profile as it is, instead of reading "nothing stored" and logging the profile out
 * over a session that is still there (and unrevoked). The way out it names is the one-time move (store-move.ts).
 */
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import type { Profile } from '../../store/types.js';
import { suggestCommand } from '../suggest.js';

/**
 * The exit-4 error for a recorded store this run cannot reach (`error` a KeychainUnavailableError), or undefined
 * for any other error. The fix it names moves the session to the file once, from where the keychain works.
 */
export async function unreachableStoreError(ctx: Context, profile: Profile, error: unknown): Promise<AuthError | undefined> {
  const { KeychainUnavailableError } = await import('../../store/keychain.js');
  if (!(error instanceof KeychainUnavailableError)) return undefined;
  const move = `PLAT_TOKEN_STORE=file ${suggestCommand(ctx, ['refresh'], { profile: profile.name })}`;
  const jobs = `For jobs without the keychain (cron, ssh, CI), move the session to a 0600 file once, from a shell where the keychain works: ${move} — then run the jobs with PLAT_TOKEN_STORE=file.`;
  // The error's own advice is kept where it has some (unlock it); its generic "set PLAT_TOKEN_STORE=file" is not,
  // since that alone finds no session in the file.
  const generic = error.message === new KeychainUnavailableError(error.reason).message;
  return new AuthError(
    generic
      ? `The OS keychain is not available (${error.reason}), and profile ${profile.name} keeps its session there: this run cannot use it, and the profile is unchanged. ${jobs}`
      : `${error.message} Profile ${profile.name} is unchanged. ${jobs}`,
    { cause: error },
  );
}
