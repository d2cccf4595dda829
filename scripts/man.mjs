#!/usr/bin/env node
// Writes man/plat.1 from the program definition (the commands, options and examples of `plat <command> --help`).
// Run by `npm run build`; `--check` only reports (exit 1 if stale).
import { loadProgram, writeGenerated } from './program.mjs';

const { spec, version, renderMan } = await loadProgram();
await writeGenerated([['man/plat.1', renderMan(spec, version)]], { label: 'man.mjs' });
