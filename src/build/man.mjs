#!/usr/bin/env node
// Writes dist/plat.1 from the program definition (the commands, options and examples of `plat <command> --help`).
// Run by `npm run build`; a build product like dist/main.cjs, so it is always written, never committed.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadProgram, root } from './program.mjs';

const { spec, version, packageName, renderMan } = await loadProgram();
await mkdir(path.join(root, 'dist'), { recursive: true });
await writeFile(path.join(root, 'dist', 'plat.1'), renderMan(spec, version, packageName));
