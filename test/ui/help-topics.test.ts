/**
 * The reference lives in the product: `plat help <topic>` prints each topic of src/help/topics/, `plat help` lists
 * them, and `man plat` has a section for each, from the same text. The READMEs stay short and point there, and the
 * benchmark's README shows the figures the benchmark wrote.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { describeProgram } from '../../src/completion/model.js';
import { parseTopic, plainText } from '../../src/help/markup.js';
import { renderForTerminal } from '../../src/help/terminal.js';
import { HELP_TOPICS } from '../../src/help/topics.js';
import { makeHome, repoRoot, type Home } from '../helpers/cli.js';
import { onPath } from '../helpers/components.js';
import { BEGIN, END, renderResults } from '../bench/readme.mjs';
import { groff } from './shells.js';

const exec = promisify(execFile);
const topicsDir = path.join(repoRoot, 'src', 'help', 'topics');
const source = (name: string) => readFileSync(path.join(topicsDir, `${name}.md`), 'utf8');
const commands = buildProgram('0.0.0-test', () => {
  throw new Error('not run');
}).commands.map((c) => c.name());

/**
 * A sentence of the topic's own text (its first paragraph's first words), as a reader would search for it: as the
 * terminal shows it (`code` spans keep their backticks there), or as the man page does (in bold, without them).
 */
function sentenceOf(name: string, shown: 'terminal' | 'man'): string {
  const first = parseTopic(source(name), name).blocks.find((b) => b.type === 'paragraph');
  if (first?.type !== 'paragraph') throw new Error(`${name} has no paragraph`);
  return (shown === 'man' ? plainText(first.text) : first.text).split(/\s+/).slice(0, 8).join(' ');
}

let home: Home;
beforeAll(async () => {
  home = await makeHome();
});
afterAll(async () => {
  await home.cleanup();
});

describe('the help topics (src/help/topics/)', () => {
  it('are the index and the files, one for one, each a well-formed topic', () => {
    const files = readdirSync(topicsDir).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3));
    expect(files.sort()).toEqual(HELP_TOPICS.map((t) => t.name).sort());
    for (const topic of HELP_TOPICS) {
      const { title, blocks } = parseTopic(source(topic.name), topic.name);
      expect(title.length, topic.name).toBeGreaterThan(3);
      expect(blocks.length, topic.name).toBeGreaterThan(2);
      expect(source(topic.name), `${topic.name}: no links, no tables; the terminal cannot show them`).not.toMatch(/\]\(|^\|/m);
    }
  });

  it('include what the contract names: environment, exit codes, scripting, login beyond one desktop, security, troubleshooting', () => {
    for (const name of ['environment', 'exit-codes', 'scripting', 'sign-in', 'security', 'troubleshooting']) expect(HELP_TOPICS.map((t) => t.name)).toContain(name);
  });

  it('never take a command\'s name (plat help <command> is that command\'s help), nor each other\'s', () => {
    const names = HELP_TOPICS.flatMap((t) => [t.name, ...t.aliases]);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(commands, name).not.toContain(name);
  });

  it('name only topics and commands that exist when they say plat help <name>', () => {
    for (const topic of HELP_TOPICS) {
      for (const [, name] of source(topic.name).matchAll(/plat help ([a-z][\w-]*)/g)) {
        expect([...HELP_TOPICS.flatMap((t) => [t.name, ...t.aliases]), ...commands], `plat help ${name} in ${topic.name}.md`).toContain(name);
      }
    }
  });

  it('wrap to the width given, between 40 and 100 columns; code keeps its lines', () => {
    const topic = parseTopic(source('sign-in'), 'sign-in');
    const code = new Set(topic.blocks.flatMap((b) => (b.type === 'code' ? b.lines.map((l) => `    ${l}`) : [])));
    for (const [width, limit] of [[undefined, 80], [0, 80], [60, 60], [20, 40], [200, 100]] as const) {
      const long = renderForTerminal(topic, width)
        .split('\n')
        .filter((line) => [...line].length > limit && !code.has(line) && !/^\s+\S+$/.test(line));
      expect(long, `width ${width}`).toEqual([]);
    }
  });
});

describe('plat help', () => {
  it('lists every topic with its summary, as plat --help does', async () => {
    const [viaHelp, viaFlag] = await Promise.all([home.run(['help']), home.run(['--help'])]);
    expect(viaHelp).toMatchObject({ code: 0, stderr: '' });
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    const list = viaHelp.stdout.slice(viaHelp.stdout.indexOf('\nHelp topics'));
    for (const topic of HELP_TOPICS) expect(list).toMatch(new RegExp(`^  ${topic.name} +${topic.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    // Listed lines fit an 80-column terminal.
    for (const line of list.split('\n').filter((l) => l.startsWith('  ') && !l.includes('$ '))) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it.each(HELP_TOPICS.map((t) => [t.name]))('plat help %s prints the topic: its text, wrapped, plain, on stdout, exit 0', async (name) => {
    const result = await home.run(['help', name]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const topic = parseTopic(source(name), name);
    expect(result.stdout).toBe(renderForTerminal(topic, undefined));
    expect(result.stdout.startsWith(`${topic.title}\n\n`)).toBe(true);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain(sentenceOf(name, 'terminal'));
    expect(result.stdout).not.toMatch(/\x1b/);
  });

  it('takes a topic by its other names too', async () => {
    const topic = HELP_TOPICS.find((t) => t.name === 'security')!;
    expect(topic.aliases).toContain('servers');
    const [byName, byAlias] = await Promise.all([home.run(['help', 'security']), home.run(['help', 'servers'])]);
    expect(byAlias).toMatchObject({ code: 0, stdout: byName.stdout });
  });

  it("is where plat login --help sends a person signing in beyond one desktop (plat help login is the command's help)", async () => {
    const [viaFlag, viaHelp] = await Promise.all([home.run(['login', '--help']), home.run(['help', 'login'])]);
    expect(viaFlag.stdout).toMatch(/\nplat help sign-in\.\n$/);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });

  it('needs no working profile or config dir: help works on a broken setup', async () => {
    const result = await home.run(['help', 'environment'], { env: { PLAT_PROFILE: 'no such profile!', PLAT_CONFIG_DIR: '/dev/null/plat' } });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Environment\n/);
  });

  it.each([
    [['help', 'enviroment'], /There is no command or help topic named enviroment\. Did you mean environment\b/],
    [['help', 'exit-code'], /Did you mean exit-codes/],
    [['help', 'logn'], /Did you mean login\?/],
    [['help', 'xyzzy'], /There is no command or help topic named xyzzy\. Run plat help to list them\./],
  ])('plat %j: exit 2, the closest names, nothing on stdout', async (args, message) => {
    const result = await home.run(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('man plat (dist/plat.1)', () => {
  const page = () => readFileSync(path.join(repoRoot, 'dist', 'plat.1'), 'utf8');

  it('has a section for each topic, in the index\'s order, naming plat help <topic>', () => {
    const text = page();
    const at = HELP_TOPICS.map((t) => text.indexOf(`\n.SH ${t.manSection}\n`));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const topic of HELP_TOPICS) expect(text).toContain(`(\\fBplat help ${topic.name}\\fR)`);
  });

  it.skipIf(groff.skip)(groff.title("renders each topic's text"), async () => {
    groff.require();
    const { stdout } = await exec('groff', ['-man', '-Tutf8', '-P-cbou', '-rLL=200n', path.join(repoRoot, 'dist', 'plat.1')]);
    // Unhyphenated, on long lines: the words of a sentence are found as the topic has them.
    const text = stdout.replace(/\u2010/g, '-').replace(/\s+/g, ' ');
    for (const topic of HELP_TOPICS) {
      expect(text, topic.name).toContain(topic.manSection);
      expect(text, topic.name).toContain(sentenceOf(topic.name, 'man'));
    }
  });

  it.skipIf(!onPath('man'))('man -l renders it without a warning', async () => {
    const { stdout, stderr } = await exec('man', ['-l', path.join(repoRoot, 'dist', 'plat.1')], { env: { ...process.env, MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80', MAN_KEEP_STDERR: '1' } });
    expect(stderr).toBe('');
    expect(stdout).toContain('EXIT STATUS');
  });
});

describe('the READMEs', () => {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

  it('README.md is short enough to read to the end, and starts with the two commands a newcomer types', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    expect(readme.startsWith('# plat\n\n```\nnpm ci && npm run demo\nnpm ci && npm test\n```\n')).toBe(true);
  });

  it('README.md names only help topics and commands that exist, and lists every topic', () => {
    const named = [...readme.matchAll(/plat help ([a-z][\w-]*)/g)].map((m) => m[1]!);
    for (const name of named) expect([...HELP_TOPICS.flatMap((t) => [t.name, ...t.aliases]), ...commands], `plat help ${name}`).toContain(name);
    for (const topic of HELP_TOPICS) expect(named, topic.name).toContain(topic.name);
  });

  // The contract asks README.md to document the flags, environment variables, streams and exit codes.
  it('README.md names every command with each of its flags, and every environment variable plat help environment explains', () => {
    const program = describeProgram(buildProgram('0.0.0-test', () => {
      throw new Error('not run');
    }));
    const block = /Every command and its flags[\s\S]*?```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const linesOf = (name: string) => {
      const out: string[] = [];
      let mine = false;
      for (const line of block.split('\n')) {
        if (line.startsWith('plat ')) mine = line.startsWith(`plat ${name} `) || line === `plat ${name}`;
        if (mine) out.push(line);
      }
      return out.join('\n');
    };
    const callFlags = new Set(program.commands.find((c) => c.name === 'call')!.options.map((o) => o.long));
    for (const command of program.commands) {
      const lines = linesOf(command.name);
      expect(lines, `plat ${command.name} in README.md's list`).not.toBe('');
      for (const option of command.options) {
        if (!option.long || option.long === '--help') continue;
        const spelled = (flag: string | undefined) => flag !== undefined && new RegExp(`[\\s\\[|]${flag}[\\s\\],]`).test(`${lines} `);
        const covered = spelled(option.long) || spelled(option.short) || (lines.includes("[call's flags]") && callFlags.has(option.long));
        expect(covered, `plat ${command.name} ${option.long} in README.md`).toBe(true);
      }
    }
    for (const option of program.globalOptions) if (option.long) expect(readme, option.long).toContain(option.long);
    const variables = [...source('environment').matchAll(/^`([A-Z][A-Z0-9_]+)/gm)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(5);
    for (const variable of variables) expect(readme, variable).toContain(`\`${variable}`);
    expect(readme).toMatch(/^## Output$/m);
    expect(readme).toMatch(/^## Exit codes$/m);
  });

  it.each(['README.md', 'src/README.md', 'test/README.md', 'test/bench/README.md'])('%s links only to files that exist', (file) => {
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l) && !l.startsWith('#'));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(existsSync(path.join(repoRoot, path.dirname(file), link.split('#')[0]!)), `${file}: ${link}`).toBe(true);
  });

  it.each(['README.md', 'src/README.md', 'test/README.md', 'test/bench/README.md', 'test/coverage/unreached.md'])('%s names only files that exist', (file) => {
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    // A file named in code spans (`faults/keyring.ts`, `test/run.mjs`), from the page's folder or the repository's.
    const named = [...text.matchAll(/`([\w.-]+(?:\/[\w.-]+)+\.(?:ts|mjs|mts|md|json|jsonc|py))`/g)].map((m) => m[1]!);
    for (const name of named) {
      const found = [path.dirname(file), '.'].some((dir) => existsSync(path.join(repoRoot, dir, name)));
      expect(found, `${file}: ${name}`).toBe(true);
    }
  });

  it('test/bench/README.md shows the latest figures as the benchmark wrote them (results.json)', () => {
    const text = readFileSync(path.join(repoRoot, 'test', 'bench', 'README.md'), 'utf8');
    const results = JSON.parse(readFileSync(path.join(repoRoot, 'test', 'bench', 'results.json'), 'utf8'));
    const written = text.slice(text.indexOf(BEGIN) + BEGIN.length, text.indexOf(END));
    expect(written).toBe(`\n${renderResults(results)}\n`);
  });
});
