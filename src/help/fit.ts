/**
 * Help that fits the terminal. commander wraps an option's or command's description only while the description
 * column is at least 40 wide, so a long term (`op [options] [operationId] [parameters...]`) left every line of the
 * root help unwrapped, 173 columns on an 80-column terminal; and the text added after a command's help is written
 * as it is. Here: the term column is capped (a longer term gets a line of its own, its description under it), and
 * any line still too wide is wrapped at spaces, prose at the margin as one paragraph.
 */
import { wrapWords } from '../terminal/text.js';

/** The description column starts at most this far across (a share of the width), so descriptions keep room. */
const TERM_SHARE = 0.4;
const ITEM_INDENT = 2;
const SPACER = 2;

/** commander's Help.formatItem, with the term column capped and the description always wrapped to `width`. */
export function formatHelpItem(term: string, termWidth: number, description: string, width: number): string {
  const indent = ' '.repeat(ITEM_INDENT);
  if (!description) return indent + term;
  const column = Math.min(termWidth, Math.floor(width * TERM_SHARE));
  const under = ' '.repeat(ITEM_INDENT + column + SPACER);
  const lines = description.split('\n').flatMap((line) => wrapWords(line, width - under.length));
  const [first = '', ...rest] = lines;
  const tail = rest.map((line) => `\n${line ? under + line : ''}`).join('');
  if ([...term].length > column) return `${indent}${term}\n${under}${first}${tail}`;
  return `${indent}${term.padEnd(column)}${' '.repeat(SPACER)}${first}${tail}`;
}

/**
 * Help text with every line within `width`, where spaces allow: a run of lines at the margin is prose and is
 * refilled as one paragraph when one of its lines is too wide ("Usage:" keeps its words under the command); an
 * indented line too wide is wrapped under itself. Lines that fit are left as written (examples, tables).
 */
export function fitHelp(text: string, width: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    if (line !== '' && !line.startsWith(' ')) {
      let end = i + 1;
      while (end < lines.length && lines[end] !== '' && !lines[end]!.startsWith(' ')) end++;
      const run = lines.slice(i, end);
      if (run.some((l) => [...l].length > width)) {
        const hanging = line.startsWith('Usage: ') ? ' '.repeat('Usage: '.length) : '';
        out.push(...wrapWords(run.join(' '), width, '', hanging));
      } else {
        out.push(...run);
      }
      i = end;
      continue;
    }
    if ([...line].length > width) {
      const indent = /^ */.exec(line)![0];
      // Under the text after a list's marker, further in after a prompt (the command goes on), else under a
      // description set off by two spaces (a table's second column), else two further in.
      const item = /^ *[-*] /.exec(line)?.[0].length;
      const prompt = /^ *\$ /.exec(line)?.[0].length;
      const column = /^ +\S.*?\S {2,}(?=\S)/.exec(line)?.[0].length;
      const hanging = item ?? (prompt !== undefined ? prompt + 2 : column !== undefined && column <= width / 2 ? column : indent.length + 2);
      out.push(...wrapWords(line.slice(indent.length), width, indent, ' '.repeat(hanging)));
    } else {
      out.push(line);
    }
    i++;
  }
  return out.join('\n');
}
