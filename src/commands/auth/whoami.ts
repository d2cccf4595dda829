import type { Context } from '../../context.js';
import { identify } from '../../session/index.js';
import { sanitize } from '../../terminal/text.js';
import { describeUser, expiryText, printJson, rows } from '../shared/format.js';

export async function run(ctx: Context): Promise<void> {
  const who = await identify(ctx, { asker: 'whoami' });
  if (ctx.globals.json) {
    printJson(ctx.io, who.claims);
    return;
  }
  const session = who.source.kind === 'session' ? who.source.session : undefined;
  const entries: Array<[string, string]> = who.user
    ? [
        ['User', describeUser(who.user)],
        ['Subject', sanitize(who.user.sub)],
      ]
    : [['User', '(the server does not say)']];
  entries.push(['Platform', who.baseUrl], ['Profile', who.profile.name], ['Scopes', session ? session.scopes.join(' ') || '(none)' : '(from PLAT_TOKEN)']);
  // A plain OAuth 2.x session names nobody: what plat knows of it is what there is to show.
  if (!who.user && session) entries.push(['Token', expiryText(session.expiresAt, ctx.now())]);
  ctx.io.out(rows(ctx.io, entries));
}
