/**
 * Which words main.ts runs as a plain form, without commander (src/dispatch.ts): `plat call <method> <path>`,
 * `plat token` and `plat whoami` with no option anywhere, and nothing else. That both paths then do the same is held
 * on the built CLI (test/cli/dispatch.test.ts); here, that anything else is left to commander.
 */
import { describe, expect, it } from 'vitest';
import { plainForm } from '../../src/dispatch.js';

describe('the plain forms main.ts runs without commander', () => {
  it.each([
    [['call', 'GET', '/api/courses'], { command: 'call', args: ['GET', '/api/courses'] }],
    [['call', 'help', '/api/courses'], { command: 'call', args: ['help', '/api/courses'] }],
    [['call', 'GET', ''], { command: 'call', args: ['GET', ''] }],
    [['token'], { command: 'token', args: [] }],
    [['whoami'], { command: 'whoami', args: [] }],
  ])('%j is one', (words, form) => {
    expect(plainForm(words)).toEqual(form);
  });

  it.each([
    [['call', 'GET', '/x', '--json']], // any option, global or the command's, anywhere
    [['--json', 'token']],
    [['--profile', 'school', 'whoami']],
    [['token', '--min-ttl', '60']],
    [['call', '-i', 'GET', '/x']],
    [['call', 'GET', '-']],
    [['whoami', '--']],
    [['call', 'GET', '/x', '--help']],
    [['call', 'GET']], // commander's usage errors stay commander's
    [['call', 'GET', '/x', 'extra']],
    [['token', 'extra']],
    [['whoami', 'extra']],
    [['call']],
    [['Call', 'GET', '/x']],
    [['help', 'call']],
    [['op', 'listCourses']],
    [['status']],
    [[]],
  ])('%j is left to commander', (words) => {
    expect(plainForm(words)).toBeUndefined();
  });
});
