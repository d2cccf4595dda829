/**
 * Real shells asked for completions the way a user's Tab press asks them:
 * - bash: an interactive bash on a pseudo-terminal (util-linux `script`), readline's own completion of a typed
 *   line; `insert-completions` puts every candidate into the line, a key bound with `bind -x` prints the line.
 * - zsh: compinit and _plat from an fpath directory, Tab in an interactive zsh under zpty (zsh-complete.zsh).
 * - fish: `complete -C`, fish's own completion of a command line.
 * Each runs with `plat` on PATH (a wrapper around the built bin/plat.js) for the scripts' dynamic values.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { platBin, repoRoot } from '../helpers/cli.js';
import { isCI, onPath, type Component } from '../helpers/components.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

function component(name: string, available: boolean, install: string): Component {
  const skipReason = available ? '' : `no ${name}; install with: ${install}`;
  return {
    name,
    available,
    skipReason,
    install,
    skip: !available && !isCI,
    title: (title) => (available ? title : `${title} (${isCI ? 'missing' : 'skipped'}: ${skipReason})`),
    require() {
      if (!available) throw new Error(`CI must not skip tests, but ${name} is not available here: ${skipReason}`);
    },
  };
}

/** bash needs `script` (util-linux, Essential in Debian) for its pseudo-terminal. */
export const bash = component('bash (with util-linux script)', onPath('bash') && onPath('script'), 'apt-get install -y bash bsdutils');
export const zsh = component('zsh', onPath('zsh'), 'apt-get install -y zsh');
export const fish = component('fish', onPath('fish'), 'apt-get install -y fish');

/** groff, to render the man page. */
export const groff = component('groff', onPath('groff'), 'apt-get install -y groff-base');

/** A pseudo-terminal for commands (util-linux `script`), to see what plat does when a person is looking. */
export const pty = component('a pseudo-terminal (util-linux script)', onPath('script'), 'apt-get install -y bsdutils');

export const completionsDir = path.join(repoRoot, 'completions');

/** Runs a shell command line on a pseudo-terminal; returns everything the terminal showed. */
export async function onTerminal(commandLine: string, env: Record<string, string | undefined>): Promise<{ output: string; code: number | null }> {
  const result = await run('script', ['-qec', commandLine, '/dev/null'], { TERM: 'xterm-256color', ...env });
  return { output: result.stdout, code: result.code };
}

/** A directory with an executable `plat` that runs the built CLI: put it first on PATH. */
export async function platOnPath(dir: string): Promise<string> {
  const bin = path.join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  const wrapper = path.join(bin, 'plat');
  await writeFile(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${platBin}' "$@"\n`);
  await chmod(wrapper, 0o755);
  return bin;
}

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

function run(command: string, args: string[], env: Record<string, string | undefined>, input?: (child: ReturnType<typeof spawn>, out: () => string) => void, timeoutMs = scaled(25_000)): Promise<Run> {
  return new Promise((resolve, reject) => {
    const clean = definedEnv(env) as NodeJS.ProcessEnv;
    const child = spawn(command, args, { env: clean, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      child.emit('output');
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not finish in time.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
    child.stdin!.on('error', () => {});
    if (input) input(child, () => stdout);
    else child.stdin!.end();
  });
}

const READY = 'plat-test-ready$ ';
const KEY_SHOW_LINE = '\x14'; // C-t: bound with bind -x to print the line buffer
const KEY_KILL_LINE = '\x15'; // C-u: start the next line empty
const KEY_INSERT_ALL = '\x18i'; // C-x i: insert-completions

/**
 * Types each input into one interactive bash (on a pty) and returns the line buffer after it, as readline left it:
 * an input ending in "\t" shows what Tab did; use `bashCandidates` for the full list.
 */
export async function bashKeys(inputs: string[], env: Record<string, string | undefined>, workDir: string): Promise<string[]> {
  const rc = path.join(workDir, 'bashrc');
  await writeFile(
    rc,
    [
      `PS1='${READY}'`,
      "bind 'set enable-bracketed-paste off'",
      "bind 'set bell-style none'",
      `bind -x '"\\C-t": printf "\\n<<%s>>\\n" "$READLINE_LINE"'`,
      `bind '"\\C-xi": insert-completions'`,
      `source '${path.join(completionsDir, 'plat.bash')}'`,
      '',
    ].join('\n'),
  );
  const result = await run(
    'script',
    ['-qec', `bash --noprofile --rcfile '${rc}' -i`, '/dev/null'],
    { ...env, TERM: 'dumb', INPUTRC: '/dev/null' },
    (child, out) => {
      // Keys typed before readline is ready are lost: wait for the prompt, then type everything.
      const start = () => {
        if (!out().includes(READY)) return;
        child.off('output', start);
        child.stdin!.write(inputs.map((keys) => `${keys}${KEY_SHOW_LINE}${KEY_KILL_LINE}`).join('') + 'exit\n');
      };
      child.on('output', start);
      start();
    },
  );
  const lines = [...result.stdout.matchAll(/<<(.*)>>/g)].map((m) => m[1]!);
  if (lines.length !== inputs.length) throw new Error(`bash printed ${lines.length} of ${inputs.length} lines:\n${result.stdout}\n${result.stderr}`);
  return lines;
}

/** Every candidate bash offers for the word at the end of `line` (readline's insert-completions). */
export async function bashCandidates(lines: string[], env: Record<string, string | undefined>, workDir: string): Promise<string[][]> {
  const after = await bashKeys(lines.map((line) => `${line}${KEY_INSERT_ALL}`), env, workDir);
  return after.map((result, i) => {
    const line = lines[i]!;
    // Readline replaces the text after the last space or word-break character (":" and "=" included).
    const start = Math.max(line.lastIndexOf(' '), line.lastIndexOf(':'), line.lastIndexOf('=')) + 1;
    if (!result.startsWith(line.slice(0, start))) throw new Error(`bash changed the line before the word: ${result}`);
    const inserted = result.slice(start).trim();
    const words = inserted ? inserted.split(/\s+/) : [];
    // Without a match readline leaves the word as it was: that is no candidate.
    return words.length === 1 && words[0] === line.slice(start) && !line.endsWith(' ') ? [] : words;
  });
}

/** The candidates zsh's completion system offers for each line. */
export async function zshCandidates(lines: string[], env: Record<string, string | undefined>, fpathDir = completionsDir): Promise<string[][]> {
  const script = path.join(repoRoot, 'test', 'ui', 'zsh-complete.zsh');
  const results: string[][] = [];
  for (const line of lines) {
    const result = await run('zsh', ['-f', script, fpathDir, line], { ...env, TERM: 'dumb' });
    if (result.code !== 0) throw new Error(`zsh-complete failed (${result.code}): ${result.stderr}`);
    // zsh quotes what it will insert (`\{code\}`); compare the values themselves.
    const values = result.stdout.split('\n').map((l) => l.trim().replace(/\\(.)/g, '$1')).filter(Boolean);
    results.push([...new Set(values)]);
  }
  return results;
}

/** The candidates fish offers for each line (`complete -C`), without their descriptions. */
export async function fishCandidates(lines: string[], env: Record<string, string | undefined>): Promise<string[][]> {
  const program = `source $argv[1]; for line in $argv[2..-1]; echo '<<next>>'; complete -C "$line"; end`;
  const result = await run('fish', ['--no-config', '-c', program, path.join(completionsDir, 'plat.fish'), ...lines], env);
  if (result.code !== 0) throw new Error(`fish failed (${result.code}): ${result.stderr}`);
  const blocks = result.stdout.split('<<next>>\n').slice(1);
  return blocks.map((block) => block.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!));
}
