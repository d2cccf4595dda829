/** The test toolkit's own assertions must fail on what they exist to catch. */
import { describe, expect, it } from 'vitest';
import { expectCleanError, type PlatResult } from '../helpers/cli.js';

const result = (over: Partial<PlatResult>): PlatResult => ({ code: 1, signal: null, stdout: '', stderr: 'error: The server said no. Try again later.\n', ...over });

describe('expectCleanError', () => {
  it('accepts a failure in the contract\'s words, and a success', () => {
    expect(() => expectCleanError(result({}))).not.toThrow();
    expect(() => expectCleanError(result({ code: 0, stderr: 'warning: the keychain is locked; using the file store.\n' }))).not.toThrow();
  });

  it('rejects a crash: an untranslated error, a stack trace, a signal death, an exit code outside the contract', () => {
    expect(() => expectCleanError(result({ stderr: 'error: Unexpected failure: boom. Run again with --verbose for details.\n' }))).toThrow(/unexpected failure/);
    expect(() => expectCleanError(result({ stderr: 'TypeError: x is undefined\n    at f (/plat/dist/main.cjs:1:2)\n' }))).toThrow(/stack trace/);
    expect(() => expectCleanError(result({ code: null, signal: 'SIGABRT' }))).toThrow(/killed by SIGABRT/);
    expect(() => expectCleanError(result({ code: 13 }))).toThrow(/exit code 13/);
  });
});
