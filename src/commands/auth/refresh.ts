import type { Context } from '../../context.js';
import { refreshNow, sessionNotes } from '../../session/index.js';
import { expiryText, iso, printJson } from '../shared/format.js';

export async function run(ctx: Context): Promise<void> {
  // PLAT_TOKEN set: a usage error, since plat cannot refresh a token it was handed.
  const { session, profile } = await refreshNow(ctx);
  const { capped } = sessionNotes(session, ctx.now());
  if (capped) ctx.io.note(capped);
  if (ctx.globals.json) {
    printJson(ctx.io, { profile: profile.name, expiresAt: iso(session.expiresAt), scopes: session.scopes });
    return;
  }
  ctx.io.out(`Refreshed: token ${expiryText(session.expiresAt, ctx.now())}\n`);
}
