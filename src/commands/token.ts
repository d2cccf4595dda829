import type { Context } from '../context.js';
import { getAccessToken } from '../session/binding.js';

/** The access token and nothing else, for `$(plat token)`: the only command that prints a secret, by design. */
export async function run(ctx: Context): Promise<void> {
  const { token } = await getAccessToken(ctx);
  ctx.io.out(`${token}\n`);
}
