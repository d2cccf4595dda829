/**
 * What a client throws, scrubbed of the secrets the client holds (LibrarySettings.secrets), as the command's stderr
 * is (terminal/io.ts): a server that quotes a token back in an error description cannot make the library hand it to a
 * program's logs. The message, the stack (which repeats it) and each cause's, since printing an error prints its
 * causes too.
 */
import type { KnownSecrets } from '../redact.js';

/** As deep as a cause chain is followed: plat's own errors wrap at most one or two. */
const MAX_CAUSES = 8;

export function scrubbedError(secrets: KnownSecrets, error: unknown): unknown {
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSES && current instanceof Error; depth++) {
    rewrite(current, 'message', secrets.scrub(current.message));
    if (typeof current.stack === 'string') rewrite(current, 'stack', secrets.scrub(current.stack));
    current = current.cause;
  }
  return error;
}

/**
 * Sets a scrubbed text on the error as an own property: a DOMException (an abort's or a timeout's reason, as a
 * cause) has only a getter for `message`, where plain assignment throws, and the error thrown must stay the
 * caller's. A frozen error is left as it is.
 */
function rewrite(error: Error, key: 'message' | 'stack', text: string): void {
  if (error[key] === text) return;
  try {
    Object.defineProperty(error, key, { value: text, writable: true, configurable: true, enumerable: false });
  } catch {
    // not ours to change
  }
}

/** `items`, with whatever their iteration throws scrubbed. */
export async function* scrubbingErrors<T>(secrets: KnownSecrets, items: AsyncIterable<T>): AsyncIterableIterator<T> {
  try {
    yield* items;
  } catch (error) {
    throw scrubbedError(secrets, error);
  }
}
