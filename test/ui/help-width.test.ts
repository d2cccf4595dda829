/**
 * Help fits the terminal: `plat --help`, every command's --help, every help topic and an operation's generated help
 * keep within the width (80 columns off a terminal or when COLUMNS says 80; the terminal's own columns on one, as
 * under util-linux `script`), and every example stays within 80 columns whatever the width, to be copied whole.
 * Before, commander stopped wrapping once the command column was wide (plat --help was 173 columns) and the topics'
 * examples ran to 253.
 */
import { spawn } from 'node:child_process';
import { beforeEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { describeProgram } from '../../src/completion/model.js';
import { HELP_TOPICS } from '../../src/help/topics.js';
import { platBin } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { pty } from './shells.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform();
const home = useHome();

const spec = describeProgram(
  buildProgram('0.0.0-test', () => {
    throw new Error('not run');
  }),
);
const helps: string[][] = [
  ['--help'],
  ...spec.commands.map((c) => [c.name, '--help']),
  ['scopes', 'plan', '--help'],
  ...HELP_TOPICS.map((t) => ['help', t.name]),
];

/** Lines wider than `width` columns (counted in characters: the help is plain text). */
function tooWide(text: string, width: number): string[] {
  return text.split(/\r?\n/).filter((line) => [...line].length > width);
}

describe('help at 80 columns', () => {
  it('plat --help, every command\'s --help and every topic fit 80 columns when COLUMNS says 80 (off a terminal)', async () => {
    const results = await Promise.all(helps.map((args) => home.run(args, { env: { COLUMNS: '80' } })));
    results.forEach((result, i) => {
      expect(result.code, `plat ${helps[i]!.join(' ')}: ${result.stderr}`).toBe(0);
      expect(tooWide(result.stdout, 80), `plat ${helps[i]!.join(' ')}`).toEqual([]);
    });
  });

  it('is 80 columns wide without COLUMNS off a terminal, and follows COLUMNS when it is given', async () => {
    const [plain, wide] = await Promise.all([home.run(['--help'], { env: { COLUMNS: undefined } }), home.run(['--help'], { env: { COLUMNS: '100' } })]);
    expect(tooWide(plain.stdout, 80)).toEqual([]);
    expect(tooWide(wide.stdout, 100)).toEqual([]);
    expect(tooWide(wide.stdout, 80).length).toBeGreaterThan(0);
  });

  it('every example stays within 80 columns, even where the help is wider', async () => {
    const results = await Promise.all(helps.map((args) => home.run(args, { env: { COLUMNS: '100' } })));
    results.forEach((result, i) => {
      const examples = result.stdout.split('\n').filter((line) => /^ {2,}\$ /.test(line));
      expect(tooWide(examples.join('\n'), 80), `plat ${helps[i]!.join(' ')}`).toEqual([]);
    });
  });

  it("an operation's help, written from the document, fits too", async () => {
    const args = ['op', 'updateCourse', '--help', '--base-url', platform.baseUrl];
    const [narrow, wide] = await Promise.all([home.run(args, { env: { COLUMNS: '60' } }), home.run(args, { env: { COLUMNS: '100' } })]);
    expect(narrow.code, narrow.stderr).toBe(0);
    expect(tooWide(narrow.stdout, 60)).toEqual([]);
    expect(tooWide(wide.stdout, 100)).toEqual([]);
    expect(tooWide(wide.stdout, 60).length).toBeGreaterThan(0);
  });
});

/** What a terminal of `columns` columns shows for `plat <args>` (util-linux script, a real pseudo-terminal). */
function onTerminal(columns: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = definedEnv({ ...home.env, COLUMNS: undefined, TERM: 'dumb' }) as NodeJS.ProcessEnv;
    const line = `stty cols ${columns} rows 40; '${process.execPath}' '${platBin}' ${args.join(' ')}`;
    const child = spawn('script', ['-qec', line, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('close', () => resolve(output));
  });
}

describe.skipIf(pty.skip)(pty.title('help on a terminal'), () => {
  beforeEach(() => pty.require());

  it('follows the terminal\'s columns: 80 and 100', async () => {
    for (const args of [['--help'], ['api', '--help'], ['help', 'scripting']]) {
      const [eighty, hundred] = await Promise.all([onTerminal(80, args), onTerminal(100, args)]);
      expect(eighty.split('\n').length, `plat ${args.join(' ')}: ${eighty}`).toBeGreaterThan(10);
      expect(tooWide(eighty, 80), `plat ${args.join(' ')} at 80`).toEqual([]);
      expect(tooWide(hundred, 100), `plat ${args.join(' ')} at 100`).toEqual([]);
      expect(tooWide(hundred, 80).length, `plat ${args.join(' ')} at 100 uses the width`).toBeGreaterThan(0);
    }
  });
});
