#!/usr/bin/env node
// Writes completions/plat.bash, completions/_plat and completions/plat.fish from the program definition: the
// same text `plat completion <shell>` prints. Run by `npm run build`; `--check` only reports (exit 1 if stale).
import { loadProgram, writeGenerated } from './program.mjs';

const { spec, renderScript } = await loadProgram();
await writeGenerated(
  [
    ['completions/plat.bash', renderScript(spec, 'bash')],
    ['completions/_plat', renderScript(spec, 'zsh')],
    ['completions/plat.fish', renderScript(spec, 'fish')],
  ],
  { label: 'completions.mjs' },
);
