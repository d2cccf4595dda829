import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { commandLine, escapeJsonForTerminal, isPrintable, sanitize, shellQuote, wrapWords } from '../../../src/terminal/text.js';

describe('sanitize', () => {
  it.each([
    ['ESC sequences (clear screen, colour)', 'Ada\u001b[2J\u001b[31m Lovelace', 'Ada [2J [31m Lovelace'],
    ['an OSC title change', '\u001b]0;owned\u0007Ada', ']0;owned Ada'],
    ['the one-byte CSI (C1)', 'Ada\u009b2J', 'Ada 2J'],
    ['a carriage return that would overwrite the line', 'harmless\rrm -rf', 'harmless rm -rf'],
    ['bidirectional overrides', 'abc\u202eevil', 'abc evil'],
    ['bidirectional marks and isolates', 'a\u200fb\u061cc\u2066d\u200ee', 'a b c d e'],
    ['the Unicode line and paragraph separators', 'one\u2028two\u2029three', 'one two three'],
  ])('removes %s', (_name, input, expected) => {
    expect(sanitize(input)).toBe(expected);
    expect(isPrintable(sanitize(input))).toBe(true);
  });

  it('keeps line feeds only when asked, never carriage returns', () => {
    expect(sanitize('a\nb\r\nc', 0, { multiline: true })).toBe('a\nb \nc');
    expect(sanitize('a\nb', 0)).toBe('a b');
  });

  it('bounds the length', () => {
    expect(sanitize('x'.repeat(300))).toHaveLength(201);
    expect(sanitize('x'.repeat(300), 0)).toHaveLength(300);
  });

  it('keeps ordinary text, including non-Latin letters', () => {
    expect(sanitize('Zoë Åsa 山田 <ada@example.com>')).toBe('Zoë Åsa 山田 <ada@example.com>');
  });
});

describe('escapeJsonForTerminal', () => {
  it('writes what a terminal acts on as \\u escapes: the same JSON value, inert', () => {
    const value = { title: 'a\u009b2Jb\u202ec\u2028d\u007f', plain: 'Zoë 日本' };
    const shown = escapeJsonForTerminal(JSON.stringify(value, null, 2));
    expect(shown).not.toMatch(/[\u007f-\u009f\u202e\u2028]/);
    expect(shown).toContain('a\\u009b2Jb\\u202ec\\u2028d\\u007f');
    expect(JSON.parse(shown)).toEqual(value);
  });
});

describe('shellQuote', () => {
  const hostile = [
    'courses:write;touch${IFS}pwned;#',
    "it's",
    '$(id)',
    '`id`',
    'a b',
    '',
    'x\ny',
    '"double"',
    'courses:read',
  ];

  it.each(hostile)('bash reads %j back as one word, running nothing', (value) => {
    const line = `printf '%s\\0' ${shellQuote(value)}`;
    const out = execFileSync('bash', ['-c', line], { encoding: 'utf8' });
    expect(out).toBe(`${value}\0`);
  });

  it('leaves plain words bare', () => {
    expect(shellQuote('courses:read')).toBe('courses:read');
    expect(shellQuote('https://school.example/api')).toBe('https://school.example/api');
  });

  it('commandLine quotes each word and strips control characters', () => {
    expect(commandLine(['plat', 'login', '--add-scope', 'a;b\u001b[2J'])).toBe("plat login --add-scope 'a;b [2J'");
  });
});

describe('wrapWords: the one wrap of help, help topics and tables', () => {
  it('fills words into lines within the width, the first after its lead, the rest after theirs', () => {
    expect(wrapWords('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    expect(wrapWords('one two three four', 12, '  - ', '    ')).toEqual(['  - one two', '    three', '    four']);
  });

  it('counts characters, not UTF-16 units, and gives a word longer than the width a line of its own', () => {
    expect(wrapWords('ééé ééé', 7)).toEqual(['ééé ééé']);
    expect(wrapWords('a https://school.example.com/a/very/long/path b', 10)).toEqual(['a', 'https://school.example.com/a/very/long/path', 'b']);
  });

  it('splits text at any whitespace; words given split are kept, a doubled space included', () => {
    expect(wrapWords('one\n two\tthree', 80)).toEqual(['one two three']);
    expect(wrapWords('a  b'.split(' '), 80)).toEqual(['a  b']);
  });

  it('nothing to wrap: the lead alone, without trailing spaces', () => {
    expect(wrapWords('   ', 80, '    ')).toEqual(['']);
  });
});
