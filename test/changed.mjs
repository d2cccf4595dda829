/**
 * `npm test -- --changed [ref]` (test/run.mjs): the tests a change touches, against `ref` (default HEAD: the work
 * not yet committed; `--changed main` for a branch), untracked files included.
 *
 * Two ways a test reaches the code, so two ways to find it:
 * - through imports (unit, in-process, the helpers and the reference platform): vitest's own `related` command
 *   follows each test file's import graph to the changed files, and a changed test file is related to itself;
 * - through the built CLI, which tests spawn and never import: a test file of test/cli, test/faults, test/ui,
 *   test/library or test/interop whose name carries the changed module's name, its first word or its folder's name
 *   (src/session/login/device-flow.ts: test/cli/login/device.test.ts; src/mcp/call.ts: test/cli/mcp.test.ts).
 *   A guess by name, not a proof: run the folder, or the whole suite, before a commit that others build on.
 * A change to what every test stands on (package.json, the lockfile, the vitest config, the build) runs everything.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const SPAWNING = ['test/cli', 'test/faults', 'test/ui', 'test/library', 'test/interop'];
const EVERYTHING = [/^package(-lock)?\.json$/, /^test\/vitest\.config\.ts$/, /^test\/run\.mjs$/, /^src\/build\//, /^tsconfig\.json$/];
/** First words too common to pick tests by. */
const VAGUE = new Set(['index', 'types', 'errors', 'error', 'text', 'io', 'options', 'client', 'base', 'read', 'page', 'login', 'session']);

/**
 * The vitest command line for `args`: `run` as given, or, with --changed, `related --run` with the changed files
 * and the spawning tests named after them. `undefined`: nothing changed, so nothing to run.
 */
export function vitestCommand(args, root) {
  const at = args.indexOf('--changed');
  if (at < 0) return ['run', ...args];
  const next = args[at + 1];
  const ref = next !== undefined && !next.startsWith('-') && !existsSync(path.join(root, next)) ? next : 'HEAD';
  const rest = args.filter((_, i) => i !== at && !(ref !== 'HEAD' && i === at + 1));
  const git = (...gitArgs) => execFileSync('git', gitArgs, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const changed = [...new Set([...git('diff', '--name-only', ref), ...git('ls-files', '--others', '--exclude-standard')])];
  if (changed.some((file) => EVERYTHING.some((re) => re.test(file)))) return ['run', ...rest];
  const present = changed.filter((file) => existsSync(path.join(root, file)) && /\.(ts|mts|mjs|js|md|json)$/.test(file));
  if (present.length === 0) return undefined;
  return ['related', '--run', ...present, ...spawningTests(present, root), ...rest];
}

function spawningTests(changed, root) {
  const names = new Set();
  for (const file of changed) {
    // Help topics are what plat help prints: their tests are the help tests.
    if (/^src\/help\//.test(file)) names.add('help');
    if (!file.startsWith('src/')) continue;
    const stem = path.basename(file).replace(/\.[^.]+$/, '');
    names.add(stem);
    const first = stem.split('-')[0];
    if (first.length >= 3 && !VAGUE.has(first)) names.add(first);
    // A capability's folder names it too: src/mcp/call.ts is plat mcp's, src/batch/journal.ts plat batch's.
    const folder = path.basename(path.dirname(file));
    if (folder !== 'src' && folder.length >= 3 && !VAGUE.has(folder)) names.add(folder);
  }
  if (names.size === 0) return [];
  return SPAWNING.flatMap((dir) => testFilesUnder(path.join(root, dir), root)).filter((test) => {
    const base = path.basename(test, '.test.ts');
    return [...names].some((name) => base === name || base.startsWith(`${name}-`) || base.endsWith(`-${name}`));
  });
}

function testFilesUnder(dir, root) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFilesUnder(full, root);
    return entry.name.endsWith('.test.ts') ? [path.relative(root, full)] : [];
  });
}
