import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { refreshSession } from '../session/access.js';
import { requireSession } from '../session/binding.js';
import { cappedLifetimeNote } from '../session/no-refresh-token.js';
import { expiryText, iso, printJson } from './format.js';

export async function run(ctx: Context): Promise<void> {
  if (ctx.env.PLAT_TOKEN) throw new UsageError('PLAT_TOKEN is set: that token cannot be refreshed by plat. Unset it to refresh the stored session.');
  const active = await requireSession(ctx);
  const { session, profile } = await refreshSession(ctx, active, { onlyIfUnchanged: false });
  const capped = cappedLifetimeNote(session);
  if (capped) ctx.io.note(capped);
  if (ctx.globals.json) {
    printJson(ctx.io, { profile: profile.name, expiresAt: iso(session.expiresAt), scopes: session.scopes });
    return;
  }
  ctx.io.out(`Refreshed: token ${expiryText(session.expiresAt, ctx.now())}\n`);
}
