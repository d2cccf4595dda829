/** main.ts's reading of argv and the environment before commander runs. */
import { describe, expect, it } from 'vitest';
import { platsOwn, promptWanted } from '../../src/main.js';

const argv = (line: string) => ['node', 'plat', ...line.split(' ')];

describe('promptWanted: whether plat may ask a question, as far as the person said', () => {
  it('yes unless --no-prompt is given (anywhere among plat\'s words) or PLAT_NO_PROMPT=1', () => {
    expect(promptWanted(argv('call GET /api/analytics'), {})).toBe(true);
    expect(promptWanted(argv('call GET /api/analytics --no-prompt'), {})).toBe(false);
    expect(promptWanted(argv('--no-prompt call GET /api/analytics'), {})).toBe(false);
    expect(promptWanted(argv('call GET /api/analytics'), { PLAT_NO_PROMPT: '1' })).toBe(false);
    expect(promptWanted(argv('call GET /api/analytics'), { PLAT_NO_PROMPT: '0' })).toBe(true);
  });

  it("a --no-prompt after `--` is the other program's: plat exec -- mytool --no-prompt leaves plat's prompting on", () => {
    expect(promptWanted(argv('exec -- mytool --no-prompt'), {})).toBe(true);
    expect(promptWanted(argv('exec --env API_TOKEN -- plat call GET /api/analytics --no-prompt'), {})).toBe(true);
    // plat's own, before the `--`, still counts.
    expect(promptWanted(argv('--no-prompt exec -- mytool'), {})).toBe(false);
    expect(promptWanted(argv('exec --no-prompt -- mytool --no-prompt'), {})).toBe(false);
  });
});

describe("platsOwn: the words main.ts reads for --verbose and --no-color before commander runs", () => {
  it("ends at `--`: plat exec -- curl --verbose is curl's trace, not plat's", () => {
    expect(platsOwn(argv('exec -- curl --verbose --no-color'))).not.toContain('--verbose');
    expect(platsOwn(argv('exec -- curl --verbose --no-color'))).not.toContain('--no-color');
    expect(platsOwn(argv('--verbose exec -- curl'))).toContain('--verbose');
    expect(platsOwn(argv('call GET /api/courses --verbose'))).toContain('--verbose');
  });
});
