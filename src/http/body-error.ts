/**
 * A response body that failed while it was being read, said the same way by every reader (plat call's output,
 * UserInfo, the OAuth responses, the API description): plat's own errors (a body too large) as they are, Ctrl-C
 * as an interruption, a deadline as a timeout with what can be raised, anything else as a body that broke off —
 * a network failure (exit 3), never a bug.
 */
import { InterruptedError, NetworkError, PlatError } from '../errors.js';
import { describeNetworkCode } from './network-codes.js';

export interface BodyErrorOptions {
  /** The invocation was interrupted (Ctrl-C): whatever the stream says, that is why it ended. */
  interrupted?: boolean;
  /** What the person can do about a deadline, e.g. "Raise --timeout if it needs longer." */
  onTimeout?: string;
}

export function bodyReadError(error: unknown, url: URL, options: BodyErrorOptions = {}): PlatError {
  if (error instanceof PlatError) return error;
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  if (options.interrupted || name === 'AbortError') return new InterruptedError();
  if (name === 'TimeoutError') {
    return new NetworkError(`The response from ${url.origin} timed out before it was complete. ${options.onTimeout ?? 'Try again later.'}`, { cause: error });
  }
  const known = typeof code === 'string' ? code : undefined;
  const why = (known && describeNetworkCode(known)) ?? known ?? 'the connection closed';
  return new NetworkError(`The response from ${url.origin} broke off before it was complete (${why}). Check your network and try again.`, {
    cause: error,
    code: known,
  });
}
