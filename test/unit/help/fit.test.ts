/**
 * Help fitted to a width: commander's item rows with the term column capped, and any other line wrapped the way a
 * reader expects (prose refilled, a table row under its second column, a command under its prompt).
 */
import { describe, expect, it } from 'vitest';
import { fitHelp, formatHelpItem } from '../../../src/help/fit.js';

const widest = (text: string) => Math.max(...text.split('\n').map((line) => [...line].length));

describe('formatHelpItem', () => {
  it('wraps the description under its column, even when commander would not (a wide term column)', () => {
    const row = formatHelpItem('-f, --field <key=value>', 24, 'add a string field (repeatable): query on GET/HEAD/DELETE, JSON body otherwise', 60);
    expect(widest(row)).toBeLessThanOrEqual(60);
    expect(row.split('\n')[0]).toMatch(/^ {2}-f, --field <key=value> {3}add a string field/);
    expect(row.split('\n')[1]).toMatch(/^ {28}\S/);
  });

  it('gives a term wider than the capped column a line of its own, its description under it', () => {
    const term = 'op [options] [operationId] [parameters...]';
    const row = formatHelpItem(term, term.length, 'list the operations of the API, or call one by its operationId', 80);
    const [first, second] = row.split('\n');
    expect(first).toBe(`  ${term}`);
    expect(second).toMatch(/^ {36}list the operations/);
    expect(widest(row)).toBeLessThanOrEqual(80);
  });

  it('prints a term without a description as it is', () => {
    expect(formatHelpItem('help', 10, '', 80)).toBe('  help');
  });
});

describe('fitHelp', () => {
  it('leaves lines that fit as written', () => {
    const text = 'Examples:\n  $ plat whoami\n\nShort prose.\nAnother line.';
    expect(fitHelp(text, 40)).toBe(text);
  });

  it('refills prose at the margin as one paragraph when a line of it is too wide', () => {
    const text = 'one two three four five six seven eight nine ten\neleven twelve';
    const fitted = fitHelp(text, 20);
    expect(widest(fitted)).toBeLessThanOrEqual(20);
    expect(fitted.replace(/\n/g, ' ')).toBe(text.replace(/\n/g, ' '));
  });

  it('keeps a usage line\'s words under the command', () => {
    const fitted = fitHelp('Usage: plat op [filter] | <operationId> [--<parameter> <value>]...', 40);
    expect(fitted.split('\n')[1]).toMatch(/^ {7}\S/);
  });

  it('wraps a table row under its second column, a command under its prompt, a list item under its text', () => {
    const row = fitHelp('  --name <x>   a description long enough to need a second line here', 40).split('\n');
    expect(row[1]).toMatch(/^ {15}\S/);
    const command = fitHelp('  $ plat call GET /api/courses --paginate --ndjson --jq .id', 40).split('\n');
    expect(command[1]).toMatch(/^ {6}\S/);
    const item = fitHelp('  - an item of a list that is long enough to wrap', 30).split('\n');
    expect(item[1]).toMatch(/^ {4}\S/);
  });
});
