/**
 * A help topic as `plat help <topic>` prints it: plain text (no escape codes, on a terminal or not), wrapped to the
 * width it is given, laid out as a man page is: section headings at the margin, text indented under them, code
 * indented further and never wrapped (a command keeps its line, to be copied whole). In running text a `code` span
 * keeps its backticks, which tell a name (`none`, `scope`) from the words around it, as bold does in the man page;
 * headings and terms, set apart already, lose them.
 */
import { wrapWords } from '../terminal/text.js';
import { plainText, type Block, type Topic } from './markup.js';

const TEXT = 2;
const CODE = 4;
const HANGING = 4;

/** `width`: the terminal's columns, or undefined (or 0) off a terminal: 80. Kept between 40 and 100 to stay readable. */
export function renderForTerminal(topic: Topic, width?: number): string {
  const columns = width ? Math.max(40, Math.min(width, 100)) : 80;
  const out: string[] = [...wrapWords(topic.title, columns), ''];
  for (const block of topic.blocks) out.push(...renderBlock(block, columns), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

function renderBlock(block: Block, columns: number): string[] {
  switch (block.type) {
    case 'heading':
      return wrapWords(plainText(block.text), columns);
    case 'paragraph':
      return wrapWords(block.text, columns, ' '.repeat(TEXT), ' '.repeat(TEXT));
    case 'list':
      return block.items.flatMap((item) => wrapWords(item, columns, `${' '.repeat(TEXT)}- `, ' '.repeat(HANGING)));
    case 'definitions':
      return block.items.flatMap(({ term, definition }) => {
        const indent = ' '.repeat(TEXT + HANGING);
        const name = plainText(term);
        // A short term (an exit code) starts its definition's line, as man's tagged paragraphs do.
        if (name.length < HANGING) return wrapWords(definition, columns, `${' '.repeat(TEXT)}${name.padEnd(HANGING)}`, indent);
        return [...wrapWords(name, columns, ' '.repeat(TEXT), ' '.repeat(TEXT)), ...wrapWords(definition, columns, indent, indent)];
      });
    case 'code':
      return block.lines.flatMap((line) => (line === '' ? [''] : codeLine(line, columns)));
  }
}

/**
 * A line of code as wide as the terminal allows. It stays whole where it fits; else its trailing comment (`# …` or
 * `// …`, after spaces) goes on a line of its own above it, so the command can still be copied whole. Only a line
 * that is still too wide (sample output, a message) is wrapped, under itself.
 */
function codeLine(line: string, columns: number): string[] {
  const indent = ' '.repeat(CODE);
  if (CODE + [...line].length <= columns) return [`${indent}${line}`];
  const comment = /^(\s*)(\S.*?)\s{2,}((?:#|\/\/) .*)$/.exec(line);
  if (comment) return [...codeLine(`${comment[1]}${comment[3]}`, columns), ...codeLine(`${comment[1]}${comment[2]}`, columns)];
  const own = /^\s*/.exec(line)![0];
  return wrapWords(line, columns, indent + own, `${indent}${own}  `);
}
