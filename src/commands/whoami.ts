import type { Context } from '../context.js';
import { whoAmI } from '../session/userinfo.js';
import { sanitize } from '../text.js';
import { describeUser, printJson, rows } from './format.js';

export async function run(ctx: Context): Promise<void> {
  const who = await whoAmI(ctx);
  if (ctx.globals.json) {
    printJson(ctx.io, who.claims);
    return;
  }
  const scopes = who.source.kind === 'session' ? who.source.session.scopes.join(' ') : '(from PLAT_TOKEN)';
  const entries: Array<[string, string]> = [
    ...(who.user
      ? ([
          ['User', describeUser(who.user)],
          ['Subject', sanitize(who.user.sub)],
        ] as Array<[string, string]>)
      : ([['User', '(the server does not say)']] as Array<[string, string]>)),
    ['Platform', who.baseUrl],
    ['Profile', who.profile.name],
    ['Scopes', scopes],
  ];
  ctx.io.out(rows(ctx.io, entries));
}
