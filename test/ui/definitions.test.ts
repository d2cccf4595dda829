/**
 * What the command definitions produce, held byte for byte against goldens written from them (test/ui/definitions/):
 * every command's and subcommand's help at two widths, defined at once and lazily as main.ts defines them, the model
 * the completions and the man page read (describeProgram), the three completion scripts (completions/) and the man page. A change to
 * a definition that changes what people read shows here as a diff to review; regenerate the goldens with
 * PLAT_WRITE_GOLDENS=1 (and read the diff before committing it). Moving where a command is defined changes nothing.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { renderMan } from '../../src/completion/man.js';
import { describeProgram } from '../../src/completion/model.js';
import { renderScript } from '../../src/completion/render.js';
import { repoRoot } from '../helpers/cli.js';

const GOLDENS = path.join(repoRoot, 'test', 'ui', 'definitions');
const WRITE = process.env.PLAT_WRITE_GOLDENS === '1';

function golden(name: string, actual: string): void {
  const file = path.join(GOLDENS, name);
  if (WRITE) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  expect(existsSync(file), `${name}: no golden (PLAT_WRITE_GOLDENS=1 writes it)`).toBe(true);
  expect(actual, name).toBe(readFileSync(file, 'utf8'));
}

const program = (width: number, lazy = false) =>
  buildProgram(
    '0.0.0',
    () => {
      throw new Error('only described here, never run');
    },
    { lazy, output: { getOutHelpWidth: () => width, getErrHelpWidth: () => width, getOutHasColors: () => false, getErrHasColors: () => false } },
  );

/** Every command below the root, with the words that reach it (`scopes`, …). */
function commands(root: Command, words: string[] = []): Array<[string, Command]> {
  return root.commands.flatMap((c) => [[[...words, c.name()].join(' '), c] as [string, Command], ...commands(c, [...words, c.name()])]);
}

describe('the command definitions (help, completions, man page), against their goldens', () => {
  for (const width of [80, 120]) {
    it(`writes the root help and every command's help as before, at ${width} columns`, () => {
      const whole = program(width);
      golden(`help-${width}/plat.txt`, whole.helpInformation());
      for (const [name, command] of commands(whole)) golden(`help-${width}/${name.replace(/ /g, '_')}.txt`, command.helpInformation());
    });
  }

  it('defines each command lazily (as a run does) to the same help as all at once', () => {
    const whole = program(80);
    const lazy = program(80, true);
    const lazyCommands = new Map(commands(lazy));
    for (const [name, command] of commands(whole)) expect(lazyCommands.get(name)?.helpInformation(), name).toBe(command.helpInformation());
    expect(lazy.helpInformation()).toBe(whole.helpInformation());
  });

  it('describes the program to the completions and the man page as before', () => {
    const spec = describeProgram(program(80));
    golden('model.json', `${JSON.stringify(spec, null, 2)}\n`);
    // completions/ holds the scripts as committed (test/ui/generated.test.ts keeps it in step with the build).
    for (const [shell, file] of [['bash', 'plat.bash'], ['zsh', '_plat'], ['fish', 'plat.fish']] as const) {
      expect(renderScript(spec, shell), file).toBe(readFileSync(path.join(repoRoot, 'completions', file), 'utf8'));
    }
    const topicSource = (name: string) => readFileSync(path.join(repoRoot, 'src', 'help', 'topics', `${name}.md`), 'utf8');
    golden('plat.1', renderMan(spec, '0.0.0', 'plat-cli', topicSource));
  });
});
