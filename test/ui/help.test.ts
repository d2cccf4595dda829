/**
 * Help as documentation: `plat --help` groups the commands and shows the journey; every command's --help has a
 * description, every option and argument explained, and examples that use only options the command has; mistakes
 * get the closest match suggested (exit 2). The list of commands and options comes from the program definition, so
 * a new command or option without help fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { describeProgram, type CommandSpec } from '../../src/completion/model.js';
import { makeHome, type Home } from '../helpers/cli.js';
import { OPERATIONS } from '../platform/operations.mjs';

const spec = describeProgram(
  buildProgram('0.0.0-test', () => {
    throw new Error('not run');
  }),
);
const commands = spec.commands.filter((c) => c.name !== 'help');
const globalFlags = spec.globalOptions.flatMap((o) => [o.long, o.short]).filter(Boolean);

let home: Home;
beforeAll(async () => {
  home = await makeHome();
});
afterAll(async () => {
  await home.cleanup();
});

describe('plat --help', () => {
  it('groups the commands, shows the journey and the exit codes, on stdout', async () => {
    const result = await home.run(['--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const help = result.stdout;
    const sections = ['Options:', 'Session:', 'The API:', 'Shell:', 'The journey:'].map((h) => help.indexOf(`\n${h}\n`));
    expect(sections.every((i) => i > 0)).toBe(true);
    expect([...sections].sort((a, b) => a - b)).toEqual(sections);
    const section = (name: string) => help.slice(help.indexOf(`\n${name}\n`), help.indexOf('\n\n', help.indexOf(`\n${name}\n`) + 1));
    for (const name of ['login', 'whoami', 'status', 'refresh', 'token', 'logout']) expect(section('Session:')).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    for (const name of ['call', 'op', 'scopes', 'discover']) expect(section('The API:')).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    for (const name of ['completion', 'help']) expect(section('Shell:')).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    expect(help).toMatch(/\$ plat login --base-url \S+ --scope courses:read\n\s+\$ plat whoami\n\s+\$ plat call GET \/api\/courses \| jq \.\n\s+\$ plat logout/);
    // Wrapped to the terminal's width (test/ui/terminal.test.ts): compared word by word.
    expect(help.replace(/\s+/g, ' ')).toContain('Exit codes: 0 ok, 1 failure, 2 usage, 3 network, 4 authentication, 5 insufficient scope, 130 interrupted.');
  });

  it('explains every global option', () => {
    for (const option of spec.globalOptions) expect(option.description.length, option.long).toBeGreaterThan(8);
  });
});

/** The words of an example from `plat <command>` up to a pipe, redirection, comment or closing parenthesis. */
function exampleWords(example: string, command: string): string[] {
  const at = example.indexOf(`plat ${command}`);
  const rest = example.slice(at).split(/\s[|<>#]|\)/)[0]!;
  const words = rest.split(/\s+/).filter(Boolean);
  // After `--` the words are another program's (plat exec -- curl -H …), not plat's options.
  const end = words.indexOf('--');
  return end === -1 ? words : words.slice(0, end);
}

describe.each(commands.map((c) => [c.name, c] as [string, CommandSpec]))('plat %s --help', (name, command) => {
  it('has a description, every option and argument explained, and examples', async () => {
    const result = await home.run([name, '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const help = result.stdout;
    expect(help).toContain(`Usage: plat ${name}`);
    expect(command.description.length).toBeGreaterThan(15);
    expect(help.replace(/\s+/g, ' ')).toContain(command.description);
    for (const option of command.options) {
      expect(option.description.length, option.long).toBeGreaterThan(8);
      const firstWords = option.description.split(' ').slice(0, 3).join(' ');
      expect(help).toMatch(new RegExp(`^  ${[option.short, option.long].filter(Boolean).join(', ')}.*  ${firstWords.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
    }
    for (const argument of command.args) {
      expect(argument.description.length).toBeGreaterThan(8);
      expect(help).toMatch(new RegExp(`^  ${argument.name}\\s+\\S`, 'm'));
    }
    expect(help).toMatch(/\nExamples:\n {2}\$ /);
    expect(command.examples.length).toBeGreaterThan(0);
    expect(command.examples.some((e) => e.includes(`plat ${name}`))).toBe(true);
  });

  it('has examples that use only options the command has', () => {
    // plat op's examples also name the reference platform's operation parameters (--courseId).
    const parameters = name === 'op' ? OPERATIONS.flatMap((op) => (op.parameters ?? []).map((p) => `--${p.name}`)) : [];
    const known = new Set([...globalFlags, ...command.options.flatMap((o) => [o.long, o.short]), ...parameters]);
    for (const example of command.examples.filter((e) => e.includes(`plat ${name}`))) {
      for (const word of exampleWords(example, name)) {
        if (!word.startsWith('-') || word === '-') continue;
        expect(known.has(word.split('=')[0]), `${word} in "${example}"`).toBe(true);
      }
    }
  });

  it('plat help ' + name + ' prints the same', async () => {
    const [viaHelp, viaFlag] = await Promise.all([home.run(['help', name]), home.run([name, '--help'])]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });
});

describe('mistakes get the closest match suggested (exit 2, nothing on stdout)', () => {
  it.each([
    [['logn'], /unknown command 'logn'\n\(Did you mean login\?\)/],
    [['stauts'], /\(Did you mean status\?\)/],
    [['scope'], /\(Did you mean scopes\?\)/],
    [['discovr', '--base-url', 'https://x.example'], /\(Did you mean discover\?\)/],
    [['login', '--scop', 'x'], /unknown option '--scop'\n\(Did you mean --scope\?\)/],
    [['call', 'GET', '/x', '--heder', 'a: b'], /\(Did you mean --header\?\)/],
    [['whoami', '--verbos'], /\(Did you mean --verbose\?\)/],
    [['--profle', 'x', 'whoami'], /\(Did you mean --profile\?\)/],
    [['op', '--refersh'], /\(Did you mean --refresh\?\)/],
  ])('plat %j', async (args, message) => {
    const result = await home.run(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('a bad choice names the allowed ones', async () => {
    const result = await home.run(['completion', 'tcsh']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Allowed choices are bash, zsh, fish/);
  });
});

describe('the program main.ts builds lazily (each command defined when dispatched or described)', () => {
  const build = (lazy: boolean) =>
    buildProgram('0.0.0-test', () => {
      throw new Error('not run');
    }, { lazy });

  it('gives the root help and every command\'s help exactly as the program defined all at once', () => {
    const eager = build(false);
    const lazy = build(true);
    expect(lazy.helpInformation()).toBe(eager.helpInformation());
    // A fresh lazy program per command, so that no other command's help has defined it first.
    for (const command of eager.commands) {
      const fresh = build(true).commands.find((c) => c.name() === command.name())!;
      expect(fresh.helpInformation(), command.name()).toBe(command.helpInformation());
    }
  });

  it('leaves the commands not dispatched undefined: no options or arguments on them yet', () => {
    const lazy = build(true);
    const call = lazy.commands.find((c) => c.name() === 'call')!;
    expect([call.options.length, call.registeredArguments.length]).toEqual([0, 0]);
    expect(describeProgram(build(false)).commands.find((c) => c.name === 'call')!.options.length).toBeGreaterThan(10);
  });
});

describe('habits from gh and kubectl', () => {
  it('plat version prints what plat --version prints', async () => {
    const [version, flag] = await Promise.all([home.run(['version']), home.run(['--version'])]);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toBe(flag.stdout);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
  });

  it('-o json and --output json are usage errors (exit 2) that point to --json', async () => {
    for (const args of [['status', '-o', 'json'], ['whoami', '--output', 'json'], ['scopes', '--output=json'], ['-o', 'json', 'status']]) {
      const result = await home.run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(/unknown option '(-o|--output|--output=json)': for machine-readable output, plat takes --json \(as in plat status --json\)\./);
      expect(result.stdout).toBe('');
    }
  });
});

