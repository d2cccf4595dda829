/**
 * plat(1), rendered from the same program description as the completions (commands, options, examples), plus one
 * section per help topic, from the same text `plat help <topic>` prints (src/help/topics/*.md). `npm run build`
 * writes it to dist/plat.1.
 */
import { parseTopic, plainText, spans, type Block } from '../help/markup.js';
import { HELP_TOPICS } from '../help/topics.js';
import type { CommandSpec, OptionSpec, ProgramSpec } from './model.js';

/** Escapes roff: backslashes, a leading dot or quote, and option dashes (minus signs, not hyphens). */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/(?<![A-Za-z0-9])-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}
const flagText = (flag: string) => `\\fB${flag.replace(/-/g, '\\-')}\\fR`;

function optionItem(o: OptionSpec): string {
  const flags = [o.short, o.long].filter((f): f is string => Boolean(f)).map(flagText).join(', ');
  const value = o.takesValue ? ` \\fI${roff(o.valueName ?? 'value')}\\fR` : '';
  return `.TP\n${flags}${value}\n${roff(o.description)}`;
}

function synopsis(c: CommandSpec): string {
  const args = c.args.map((a) => (a.required ? `\\fI${a.name}\\fR` : `[\\fI${a.name}\\fR]`)).join(' ');
  const options = c.options.some((o) => o.long !== '--help') ? ' [\\fIoptions\\fR]' : '';
  return `\\fBplat ${c.name}\\fR${options}${args ? ` ${args}` : ''}`;
}

function commandSection(c: CommandSpec): string {
  const parts = [`.SS ${c.name}`, `${synopsis(c)}`, '.br', roff(c.description)];
  for (const a of c.args) parts.push(`.TP\n\\fI${a.name}\\fR\n${roff(a.description)}`);
  for (const o of c.options) if (o.long !== '--help') parts.push(optionItem(o));
  if (c.examples.length > 0) {
    parts.push('.PP\nExamples:\n.RS\n.nf', ...c.examples.map((e) => `$ ${roff(e)}`), '.fi\n.RE');
  }
  return parts.join('\n');
}

/** Topic text with its `code` spans in bold, as man pages set literal text. */
function inline(text: string): string {
  return spans(text)
    .map((span) => (span.literal ? `\\fB${roff(span.text)}\\fR` : roff(span.text)))
    .join('');
}

function topicBlock(block: Block): string {
  switch (block.type) {
    case 'heading':
      // A macro's line: a quote there would start an argument, so it is written as a character.
      return `.SS ${roff(plainText(block.text)).replace(/"/g, '\\(dq')}`;
    case 'paragraph':
      return `.PP\n${inline(block.text)}`;
    case 'list':
      return block.items.map((item) => `.IP \\(bu 2\n${inline(item)}`).join('\n');
    case 'definitions':
      return block.items.map(({ term, definition }) => `.TP\n${inline(term)}\n${inline(definition)}`).join('\n');
    case 'code':
      return ['.PP\n.RS 4\n.nf', ...block.lines.map((line) => roff(line)), '.fi\n.RE'].join('\n');
  }
}

/** `source(name)`: the text of src/help/topics/<name>.md. */
function topicSections(source: (name: string) => string): string[] {
  return HELP_TOPICS.map((topic) => {
    const { blocks } = parseTopic(source(topic.name), topic.name);
    return [`.SH ${topic.manSection}`, `.PP\n(\\fBplat help ${roff(topic.name)}\\fR)`, ...blocks.map(topicBlock)].join('\n');
  });
}

/** `packageName`: the npm package plat is installed from (package.json's name), not the command's name. */
export function renderMan(program: ProgramSpec, version: string, packageName: string, topicSource: (name: string) => string): string {
  const groups = [...new Set(program.commands.map((c) => c.group))];
  return [
    `.\\" plat(1). Generated from plat's command definitions by src/build/man.mjs; do not edit.`,
    `.TH PLAT 1 "" "plat ${roff(version)}" "User Commands"`,
    '.SH NAME',
    `plat \\- ${roff(program.description.replace(/\.$/, ''))}`,
    '.SH SYNOPSIS',
    '\\fBplat\\fR [\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    'plat signs you in to the learning platform\'s API with OAuth 2.0 and OpenID Connect (discovery, dynamic client',
    'registration, the authorization code flow with PKCE in your browser), keeps the tokens in the OS keychain,',
    'refreshes them before they expire, revokes them at logout, and calls the API from a terminal or a script.',
    'Results go to stdout; progress, notes, warnings and errors to stderr.',
    '.PP',
    `plat is installed from npm as the package \\fB${roff(packageName)}\\fR (\\fBnpm i \\-g ${roff(packageName)}\\fR, or`,
    `\\fBnpx ${roff(packageName)}\\fR without installing); the command it installs is \\fBplat\\fR. The same package is a Node`,
    `library that uses the session plat keeps: \\fBimport { createClient } from '${roff(packageName)}'\\fR.`,
    '.PP',
    'The journey:',
    '.RS\n.nf',
    '$ plat login \\-\\-base\\-url https://school.example.com \\-\\-scope courses:read',
    '$ plat whoami',
    '$ plat call GET /api/courses | jq .',
    '$ plat logout',
    '.fi\n.RE',
    '.SH GLOBAL OPTIONS',
    'Accepted before or after the command.',
    ...program.globalOptions.map(optionItem),
    '.SH COMMANDS',
    ...groups.flatMap((group) => [
      `.PP\n\\fB${roff(group)}\\fR`,
      ...program.commands.filter((c) => c.group === group).map(commandSection),
    ]),
    ...topicSections(topicSource),
    '.SH SEE ALSO',
    '\\fBplat help\\fR \\fItopic\\fR prints each section above from \\fBSIGNING IN\\fR on by itself; \\fBplat\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR a',
    'command\'s options and examples; \\fBplat completion\\fR \\fIbash\\fR|\\fIzsh\\fR|\\fIfish\\fR the shell completions. README.md in the',
    'package: what plat is, and the journey.',
    '',
  ].join('\n');
}
