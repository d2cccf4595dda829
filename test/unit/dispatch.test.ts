/**
 * main.ts runs the plain forms (`plat call <method> <path>`, `plat token`, `plat whoami`) without commander
 * (src/dispatch.ts). Held here against commander itself: for each plain form, the command's module is called with
 * the same words, flags and global options either way; anything else is left to commander. The command modules are
 * stand-ins that record their call: what is compared is the command line, not what the commands do (the CLI suites
 * run those, through both paths).
 */
import { describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import type { Context, Globals } from '../../src/context.js';
import { plainInvocation } from '../../src/dispatch.js';

const calls = vi.hoisted(() => [] as unknown[][]);
vi.mock('../../src/commands/call.js', () => ({ run: async (...args: unknown[]) => void calls.push(['call', ...args]) }));
vi.mock('../../src/commands/token.js', () => ({ run: async (...args: unknown[]) => void calls.push(['token', ...args]) }));
vi.mock('../../src/commands/whoami.js', () => ({ run: async (...args: unknown[]) => void calls.push(['whoami', ...args]) }));

/** A context that is only its globals: the stand-ins record it with the rest of their arguments. */
const makeContext = (globals: Globals) => ({ globals }) as unknown as Context;

async function throughCommander(words: string[]): Promise<unknown[][]> {
  calls.length = 0;
  const program = buildProgram('0.0.0-test', makeContext, { lazy: true });
  program.exitOverride();
  program.configureOutput({ writeErr: () => {} });
  await program.parseAsync(['node', 'plat', ...words]);
  return [...calls];
}

async function throughPlainDispatch(words: string[]): Promise<unknown[][]> {
  calls.length = 0;
  const plain = plainInvocation(words, makeContext);
  if (!plain) throw new Error(`${words.join(' ')}: not a plain form`);
  await plain();
  return [...calls];
}

describe('the plain forms main.ts runs without commander', () => {
  it.each([
    [['call', 'GET', '/api/courses']],
    [['call', 'post', 'courses']],
    [['call', 'GET', 'https://school.example.com/api/courses?page=2&q=a b']],
    [['call', 'GET', '']],
    [['call', 'help', '/api/courses']], // a method named like the help command is still the method
    [['call', 'DELETE', '/api/courses/=x']],
    [['token']],
    [['whoami']],
  ])('%j reaches the command as commander hands it on', async (words) => {
    const direct = await throughPlainDispatch(words);
    expect(direct).toHaveLength(1);
    expect(direct).toEqual(await throughCommander(words));
  });

  it('hands the command the global options commander gives when none is set', async () => {
    const [[, context]] = (await throughPlainDispatch(['whoami'])) as [[string, Context]];
    expect(context.globals).toEqual({ baseUrl: undefined, profile: '', json: false, verbose: false });
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
    expect(plainInvocation(words, makeContext)).toBeUndefined();
  });

  it('leaves to commander what commander rejects', async () => {
    // (plat call GET, without its path, is answered by call's own action: commands/call-usage.ts.)
    for (const words of [['call', 'GET', '/x', 'extra'], ['token', 'extra']]) {
      expect(plainInvocation(words, makeContext)).toBeUndefined();
      await expect(throughCommander(words)).rejects.toMatchObject({ exitCode: 1, code: expect.stringMatching(/^commander\./) });
    }
  });
});
