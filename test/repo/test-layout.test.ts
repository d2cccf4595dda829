/**
 * Where a test goes (test/README.md's table), held: a test file lives in the folder of its kind, and a unit or
 * in-process test mirrors src/ — its folder is src's folder, its name the module it tests (or `<module>-<aspect>`),
 * so the tests of src/session/tokens/access.ts are test/unit/session/tokens/access.test.ts and
 * test/in-process/session/tokens/access.test.ts, and nowhere else.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The kinds, by folder under test/. */
const KINDS = ['unit', 'in-process', 'cli', 'faults', 'interop', 'ui', 'library', 'repo'];
/** Kinds whose files mirror src/. */
const MIRRORED = ['unit', 'in-process'];

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (entry.name.endsWith('.test.ts')) out.push(path.relative(root, full).split(path.sep).join('/'));
  }
  return out;
}

/** Why `file` (test/…/x.test.ts) is out of place, or null. */
function misplaced(file: string, srcHas: (relative: string) => boolean): string | null {
  const [top, kind = '', ...rest] = file.split('/');
  if (top !== 'test' || !KINDS.includes(kind)) return `not in a kind's folder (test/${KINDS.join(', test/')})`;
  if (!MIRRORED.includes(kind)) return null;
  const folder = rest.slice(0, -1).join('/');
  const name = rest.at(-1)!.replace(/\.test\.ts$/, '');
  if (folder && !srcHas(folder)) return `test/${kind}/${folder} mirrors no folder of src/`;
  const inFolder = folder ? `${folder}/` : '';
  const parts = name.split('-');
  for (let i = parts.length; i > 0; i--) {
    if (srcHas(`${inFolder}${parts.slice(0, i).join('-')}.ts`)) return null;
  }
  return `named after no module of src/${inFolder} (name it <module>.test.ts or <module>-<aspect>.test.ts)`;
}

const srcHas = (relative: string) => existsSync(path.join(root, 'src', relative));

describe('the test layout', () => {
  it('puts every test file in its kind\'s folder, and mirrors src/ in unit and in-process', () => {
    const files = testFiles(path.join(root, 'test'));
    expect(files.length).toBeGreaterThan(0);
    const wrong = files.map((file) => [file, misplaced(file, srcHas)]).filter(([, why]) => why !== null);
    expect(wrong).toEqual([]);
  });

  it('catches a file out of place', () => {
    expect(misplaced('test/session/refresh.test.ts', srcHas)).toMatch(/not in a kind's folder/);
    expect(misplaced('test/unit/sessions/access.test.ts', srcHas)).toMatch(/mirrors no folder/);
    expect(misplaced('test/unit/session/retry.test.ts', srcHas)).toMatch(/named after no module of src\/session\//);
    expect(misplaced('test/unit/session/tokens/access.test.ts', srcHas)).toBeNull();
    expect(misplaced('test/in-process/session/tokens/access-ended-session.test.ts', srcHas)).toBeNull();
    expect(misplaced('test/unit/terminal/text.test.ts', srcHas)).toBeNull();
    expect(misplaced('test/cli/anything.test.ts', srcHas)).toBeNull();
  });

  it('is the table test/README.md shows: one row per kind, in this order', () => {
    const readme = readFileSync(path.join(root, 'test', 'README.md'), 'utf8');
    const section = readme.split('## Where a test goes')[1]?.split('\n## ')[0] ?? '';
    const folders = [...section.matchAll(/^\|[^|]*\| `test\/([a-z-]+)\//gm)].map((m) => m[1]);
    expect(folders).toEqual(KINDS);
  });
});
