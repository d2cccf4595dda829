/**
 * `plat help [command|topic]`: the root help, a command's help (the same text as `plat <command> --help`), or a
 * topic of the reference (src/help/topics/<name>.md, the text `man plat` has too). A name that is neither is a
 * usage error with the closest names. Needs no session, profile or config dir: help works on a broken setup.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PlatError, UsageError } from '../errors.js';
import { parseTopic } from '../help/markup.js';
import { renderForTerminal } from '../help/terminal.js';
import { findTopic, HELP_TOPICS } from '../help/topics.js';
import { didYouMean, sanitize } from '../terminal/text.js';

declare const PLAT_VERSION: string | undefined;

export function runHelp(program: Command, name: string | undefined): void {
  if (name === undefined) {
    program.outputHelp();
    return;
  }
  const command = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
  if (command) {
    command.outputHelp();
    return;
  }
  const topic = findTopic(name);
  if (!topic) {
    const visible = program.createHelp().visibleCommands(program).map((c) => c.name());
    const topics = HELP_TOPICS.flatMap((t) => [t.name, ...t.aliases]);
    throw new UsageError(`There is no command or help topic named ${sanitize(name, 60)}.${didYouMean(name, [...visible, ...topics])} Run plat help to list them.`);
  }
  const output = program.configureOutput();
  const text = renderForTerminal(parseTopic(readTopicSource(topic.name), topic.name), output.getOutHelpWidth?.());
  (output.writeOut ?? ((s: string) => process.stdout.write(s)))(text);
}

/**
 * A topic's text: in dist/help/ beside the bundle (src/build/build.mjs copies it there), or beside its index in the
 * sources (tests that import this module).
 */
function readTopicSource(name: string): string {
  const dir = typeof PLAT_VERSION === 'string' ? path.join(__dirname, 'help') : path.join(__dirname, '..', 'help', 'topics');
  try {
    return readFileSync(path.join(dir, `${name}.md`), 'utf8');
  } catch (error) {
    // An install without dist/help/ (a copied bundle): a sentence, not "Unexpected failure: ENOENT".
    throw new PlatError(`The help topic ${name} is not installed beside plat (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}); man plat has the same text, or reinstall plat.`);
  }
}
