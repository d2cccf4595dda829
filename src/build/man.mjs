#!/usr/bin/env node
// Writes dist/plat.1 from the program definition (the commands, options and examples of `plat <command> --help`) and
// the help topics (src/help/topics/*.md, the text `plat help <topic>` prints). Run by `npm run build`; a build
// product like dist/main.cjs, so it is always written, never committed.
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadProgram, root } from './program.mjs';

const { spec, version, packageName, renderMan } = await loadProgram();
const topicSource = (name) => readFileSync(path.join(root, 'src', 'help', 'topics', `${name}.md`), 'utf8');
await mkdir(path.join(root, 'dist'), { recursive: true });
await writeFile(path.join(root, 'dist', 'plat.1'), renderMan(spec, version, packageName, topicSource));
