import { describe, expect, it } from 'vitest';
import { splitCommand } from '../../../src/terminal/browser.js';

describe('splitCommand', () => {
  it('splits on runs of whitespace', () => {
    expect(splitCommand('  firefox   --new-window\t-P  work ')).toEqual(['firefox', '--new-window', '-P', 'work']);
  });

  it('keeps double- and single-quoted arguments whole (even empty ones), without the quotes', () => {
    expect(splitCommand('open -a "Google Chrome"')).toEqual(['open', '-a', 'Google Chrome']);
    expect(splitCommand("'/opt/My Browser/bin/browser' --incognito")).toEqual(['/opt/My Browser/bin/browser', '--incognito']);
    expect(splitCommand('cmd "" last')).toEqual(['cmd', '', 'last']);
  });

  it('keeps the other kind of quote inside a quoted argument', () => {
    expect(splitCommand(`sh -c 'echo "$1"' x`)).toEqual(['sh', '-c', 'echo "$1"', 'x']);
  });

  it('returns nothing for an empty or blank command', () => {
    expect(splitCommand('')).toEqual([]);
    expect(splitCommand('   ')).toEqual([]);
  });
});

describe('splitCommand, found by review', () => {
  it('groups quotes inside a word the way a shell does', () => {
    expect(splitCommand('chromium --user-data-dir="/tmp/my profile" --x')).toEqual(['chromium', '--user-data-dir=/tmp/my profile', '--x']);
    expect(splitCommand(`'a'b "c d"e f\\ g`)).toEqual(['ab', 'c de', 'f g']);
    expect(splitCommand('open ""')).toEqual(['open', '']);
  });
});
