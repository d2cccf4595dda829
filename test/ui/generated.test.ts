/**
 * Generated files stay in sync with the program definition: completions/ (what `plat completion <shell>` prints)
 * and the man page. `npm run build` rewrites completions/ (committed: these tests fail when a commit forgot to) and
 * writes dist/plat.1 (a build product).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { describeProgram } from '../../src/completion/model.js';
import { repoRoot, runPlat } from '../helpers/cli.js';
import { bash, completionsDir, fish, groff, zsh } from './shells.js';

const exec = promisify(execFile);
const FILES = { bash: 'plat.bash', zsh: '_plat', fish: 'plat.fish' } as const;

describe('completions/', () => {
  it.each(Object.entries(FILES))('completions/%s… is exactly what plat completion prints', async (shell, file) => {
    const result = await runPlat(['completion', shell]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(await readFile(path.join(completionsDir, file), 'utf8'));
  });

  it('is what src/build/completions.mjs generates from src/cli.ts (npm run build)', async () => {
    await expect(exec(process.execPath, [path.join(repoRoot, 'src', 'build', 'completions.mjs'), '--check'], { cwd: repoRoot })).resolves.toBeDefined();
  });

  for (const [shell, component, args] of [
    ['bash', bash, ['-n']],
    ['zsh', zsh, ['-n']],
    ['fish', fish, ['--no-execute']],
  ] as const) {
    it.skipIf(component.skip)(component.title(`parses in ${shell}`), async () => {
      component.require();
      const file = path.join(completionsDir, FILES[shell]);
      await expect(exec(shell, [...args, file])).resolves.toMatchObject({ stderr: '' });
    });
  }
});

describe('dist/plat.1 (the man page)', () => {
  const spec = describeProgram(buildProgram('0.0.0', () => {
    throw new Error('not run');
  }));

  it('documents every command, option and example, the environment and the exit codes', async () => {
    const page = await readFile(path.join(repoRoot, 'dist', 'plat.1'), 'utf8');
    const roff = (flag: string) => flag.replace(/-/g, '\\-');
    for (const command of spec.commands) {
      expect(page).toContain(`.SS ${command.name}\n`);
      for (const option of command.options) if (option.long !== '--help') expect(page).toContain(`\\fB${roff(option.long!)}\\fR`);
      expect(command.examples.length).toBeGreaterThan(0);
    }
    for (const section of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'GLOBAL OPTIONS', 'COMMANDS', 'ENVIRONMENT', 'FILES', 'EXIT STATUS']) {
      expect(page).toContain(`.SH ${section}\n`);
    }
    for (const variable of ['PLAT_BASE_URL', 'PLAT_PROFILE', 'PLAT_CONFIG_DIR', 'PLAT_TOKEN_STORE', 'PLAT_TOKEN', 'NO_COLOR', 'HTTPS_PROXY']) {
      expect(page).toContain(variable);
    }
  });

  it.skipIf(groff.skip)(groff.title('renders with groff without warnings'), async () => {
    groff.require();
    const { stdout, stderr } = await exec('groff', ['-man', '-Tutf8', '-ww', path.join(repoRoot, 'dist', 'plat.1')]);
    expect(stderr).toBe('');
    expect(stdout).toContain('plat login');
  });
});
