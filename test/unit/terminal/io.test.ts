import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colorWanted, createIO } from '../../../src/terminal/io.js';

describe('colorWanted', () => {
  it('follows the TTY when nothing else is said', () => {
    expect(colorWanted({}, true)).toBe(true);
    expect(colorWanted({}, false)).toBe(false);
  });

  it('--no-color wins over everything, including FORCE_COLOR', () => {
    expect(colorWanted({}, true, false)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: '1' }, true, false)).toBe(false);
  });

  it('a non-empty NO_COLOR disables colour, even with FORCE_COLOR; an empty one is ignored', () => {
    expect(colorWanted({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorWanted({ NO_COLOR: 'yes', FORCE_COLOR: '1' }, true)).toBe(false);
    expect(colorWanted({ NO_COLOR: '' }, true)).toBe(true);
  });

  it('FORCE_COLOR=1 forces colour off a TTY; 0 or false turns it off on a TTY; empty is ignored', () => {
    expect(colorWanted({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '0' }, true)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: 'false' }, true)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: '' }, false)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: '' }, true)).toBe(true);
  });

  it('TERM=dumb disables colour on a TTY unless FORCE_COLOR says otherwise', () => {
    expect(colorWanted({ TERM: 'dumb' }, true)).toBe(false);
    expect(colorWanted({ TERM: 'dumb', FORCE_COLOR: '1' }, true)).toBe(true);
    expect(colorWanted({ TERM: 'xterm-256color' }, true)).toBe(true);
  });
});

describe('createIO', () => {
  function make(env: Record<string, string | undefined>, isTTY: boolean, colorFlag?: boolean) {
    const stderr = Object.assign(new PassThrough(), { isTTY });
    const stdout = Object.assign(new PassThrough(), { isTTY });
    const io = createIO({ stdout, stderr, stdin: new PassThrough(), env, colorFlag });
    return { io, stderrText: () => String(stderr.read() ?? '') };
  }

  it('paints with ANSI codes only when colour is wanted', () => {
    expect(make({}, true).io.red('x')).toContain('\u001b[');
    expect(make({}, false).io.red('x')).toBe('x');
    expect(make({}, true).io.bold('x')).toContain('\u001b[');
    expect(make({ NO_COLOR: '1' }, true).io.bold('x')).toBe('x');
    expect(make({ NO_COLOR: '1' }, true).io.red('x')).toBe('x');
    expect(make({}, true, false).io.color).toBe(false);
  });

  it('err adds exactly one newline and writes to stderr', () => {
    const { io, stderrText } = make({}, false);
    io.err('one');
    io.err('two\n');
    expect(stderrText()).toBe('one\ntwo\n');
  });
});
