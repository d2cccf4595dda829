/**
 * The small Markdown the help topics are written in (src/help/topics/*.md), read into blocks that two renderers
 * share: the terminal's (`plat help <topic>`, terminal.ts) and the man page's (src/completion/man.ts). Only what
 * both can show: a `# Title` first line, `## Section` headings, paragraphs, `- ` lists, definition lists (a term
 * line, then `: ` and its text), fenced code blocks, and `code` spans. Continuation lines of a list item or a
 * definition are indented by two spaces. Anything else is an error, so a topic that would render badly fails the
 * build's tests instead of reaching a reader.
 */
export type Block =
  | { type: 'heading'; text: string }
  | { type: 'paragraph'; text: string }
  | { type: 'list'; items: string[] }
  | { type: 'definitions'; items: Array<{ term: string; definition: string }> }
  | { type: 'code'; lines: string[] };

export interface Topic {
  title: string;
  blocks: Block[];
}

/** A run of text, literal (a `code` span: a command, a flag, a name) or not. */
export interface Span {
  text: string;
  literal: boolean;
}

const FENCE = /^```[a-z]*$/;

export function parseTopic(source: string, name = 'topic'): Topic {
  const lines = source.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  const fail = (index: number, why: string): never => {
    throw new Error(`${name}.md line ${index + 1}: ${why}`);
  };
  const title = /^# (.+)$/.exec(lines[0] ?? '')?.[1] ?? fail(0, 'a topic starts with "# Title"');
  const blocks: Block[] = [];
  let i = 1;
  const blank = (line: string | undefined) => line === undefined || line.trim() === '';
  /** The text of an item: its first line, then the lines indented by two spaces that continue it. */
  const item = (first: string): string => {
    const parts = [first];
    while (!blank(lines[i]) && lines[i]!.startsWith('  ')) parts.push(lines[i++]!.trim());
    return parts.join(' ');
  };
  while (i < lines.length) {
    const line = lines[i]!;
    if (blank(line)) {
      i++;
    } else if (FENCE.test(line)) {
      const start = i++;
      const code: string[] = [];
      while (i < lines.length && lines[i] !== '```') code.push(lines[i++]!);
      if (i === lines.length) fail(start, 'a code block that does not end');
      i++;
      blocks.push({ type: 'code', lines: code });
    } else if (line.startsWith('## ')) {
      blocks.push({ type: 'heading', text: line.slice(3).trim() });
      i++;
    } else if (line.startsWith('#')) {
      fail(i, 'only one "# Title" and "## Section" headings');
    } else if (line.startsWith('- ')) {
      const items: string[] = [];
      while (!blank(lines[i]) && lines[i]!.startsWith('- ')) items.push(item(lines[i++]!.slice(2)));
      if (!blank(lines[i])) fail(i, 'a list ends with a blank line');
      blocks.push({ type: 'list', items });
    } else if (lines[i + 1]?.startsWith(': ')) {
      const items: Array<{ term: string; definition: string }> = [];
      while (!blank(lines[i])) {
        const term = lines[i++]!;
        if (!lines[i]?.startsWith(': ')) fail(i, `the term "${term}" needs a definition line starting with ": "`);
        items.push({ term, definition: item(lines[i++]!.slice(2)) });
      }
      blocks.push({ type: 'definitions', items });
    } else if (line.startsWith(': ') || line.startsWith(' ')) {
      fail(i, 'a definition or an indented line outside a list');
    } else {
      const parts: string[] = [];
      while (!blank(lines[i]) && !FENCE.test(lines[i]!) && !lines[i]!.startsWith('- ') && !lines[i]!.startsWith('#')) parts.push(lines[i++]!.trim());
      blocks.push({ type: 'paragraph', text: parts.join(' ') });
    }
  }
  for (const block of blocks) {
    const texts = block.type === 'code' ? [] : block.type === 'list' ? block.items : block.type === 'definitions' ? block.items.flatMap((d) => [d.term, d.definition]) : [block.text];
    for (const text of texts) if ((text.match(/`/g)?.length ?? 0) % 2 !== 0) throw new Error(`${name}.md: an unclosed \` in "${text}"`);
  }
  return { title, blocks };
}

/** A line of topic text as runs: `code` spans are literal. */
export function spans(text: string): Span[] {
  return text
    .split('`')
    .map((part, index) => ({ text: part, literal: index % 2 === 1 }))
    .filter((span) => span.text !== '');
}

/** The text as a terminal shows it: code spans without their backticks. */
export function plainText(text: string): string {
  return spans(text)
    .map((s) => s.text)
    .join('');
}
