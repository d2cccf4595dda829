/** The library's errors scrubbed of the client's secrets: message, stack and causes, whatever kind of error they are. */
import { describe, expect, it } from 'vitest';
import { scrubbedError } from '../../../src/library/scrub.js';
import { KnownSecrets, REDACTED } from '../../../src/redact.js';

const TOKEN = 'access-token-0123456789';

function secrets(): KnownSecrets {
  const known = new KnownSecrets();
  known.remember(TOKEN);
  return known;
}

describe('scrubbedError', () => {
  it('scrubs the message, the stack and every cause, and returns the same error', () => {
    const cause = new Error(`the server said: bad token ${TOKEN}`);
    const error = new Error(`call failed (${TOKEN})`, { cause });
    expect(scrubbedError(secrets(), error)).toBe(error);
    expect(error.message).toBe(`call failed (${REDACTED})`);
    expect(error.stack).not.toContain(TOKEN);
    expect(cause.message).toBe(`the server said: bad token ${REDACTED}`);
    expect(cause.stack).not.toContain(TOKEN);
  });

  it('scrubs a DOMException cause (its message has only a getter) without throwing in place of the error', () => {
    const cause = new DOMException(`aborted while sending ${TOKEN}`, 'AbortError');
    const error = new Error('the request was aborted', { cause });
    expect(scrubbedError(secrets(), error)).toBe(error);
    expect(cause.message).toBe(`aborted while sending ${REDACTED}`);
    expect(cause.name).toBe('AbortError');
  });

  it('leaves a frozen error as it is, and still returns it', () => {
    const error = Object.freeze(new Error(`frozen ${TOKEN}`));
    expect(scrubbedError(secrets(), error)).toBe(error);
  });

  it('returns what is not an Error untouched', () => {
    expect(scrubbedError(secrets(), TOKEN)).toBe(TOKEN);
  });
});
