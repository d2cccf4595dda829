/**
 * `plat completion <shell>` prints the completion script generated from the program definition, and the hidden
 * `plat __complete <kind>` prints the dynamic values those scripts ask for. Neither needs the network or a session.
 */
import type { Command } from 'commander';
import { CANDIDATE_KINDS, candidates, formatCandidates, type CandidateKind } from '../completion/candidates.js';
import { describeProgram } from '../completion/model.js';
import { renderScript, type Shell } from '../completion/render.js';
import type { Context } from '../context.js';

export function printScript(ctx: Context, program: Command, shell: string): void {
  ctx.io.out(renderScript(describeProgram(program), shell as Shell));
}

/** Prints candidates and never fails: a completion that cannot be computed offers nothing. */
export async function printCandidates(makeContext: () => Context, kind: string, words: string[] = []): Promise<void> {
  if (!(CANDIDATE_KINDS as readonly string[]).includes(kind)) return;
  try {
    const ctx = makeContext();
    ctx.io.out(formatCandidates(await candidates(ctx, kind as CandidateKind, words)));
  } catch {
    // nothing to offer
  }
}
