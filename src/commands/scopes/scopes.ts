/**
 * `plat scopes`: the platform's scope catalogue. The server's metadata (`scopes_supported`) says which scopes
 * exist; the spec's table says what each grants; the profile says which ones the session holds. Without a known
 * platform it shows the spec's catalogue, and says so.
 */
import { describeScope, SPEC_SCOPE_NAMES } from '../../catalogue/scopes.js';
import type { Context } from '../../context.js';
import { currentProfile, discover, heldScopes, platformOf } from '../../session/index.js';
import { printJson } from '../shared/format.js';
import { table } from '../shared/table.js';

/** `plat scopes --json`. */
interface ScopesOutput {
  /** The platform asked, or null when none is known (then `source` is "spec"). */
  baseUrl: string | null;
  /** "server": from the metadata's scopes_supported; "spec": the platform's documented catalogue. */
  source: 'server' | 'spec';
  profile: string;
  loggedIn: boolean;
  scopes: Array<{ name: string; description: string | null; granted: boolean }>;
}

export async function run(ctx: Context): Promise<void> {
  const { io } = ctx;
  const profile = await currentProfile(ctx);
  const baseUrl = platformOf(ctx, profile) ?? null;
  let names: readonly string[] = SPEC_SCOPE_NAMES;
  let source: ScopesOutput['source'] = 'spec';
  if (baseUrl) {
    const discovery = await discover(ctx, baseUrl);
    const listed = discovery.as.scopes_supported ?? discovery.resource?.scopes_supported;
    if (Array.isArray(listed) && listed.length > 0) {
      names = listed.filter((s): s is string => typeof s === 'string');
      source = 'server';
    }
  }
  const { session: sessionHere, scopes: heldHere } = heldScopes(ctx, profile, baseUrl ?? undefined);
  const held = new Set(heldHere);
  const output: ScopesOutput = {
    baseUrl,
    source,
    profile: profile.name,
    loggedIn: sessionHere,
    scopes: [...new Set(names)].map((name) => ({ name, description: describeScope(name) ?? null, granted: held.has(name) })),
  };

  if (ctx.globals.json) {
    printJson(io, output);
    return;
  }
  if (!baseUrl) io.note('No platform known (pass --base-url or set PLAT_BASE_URL): these are the scopes the platform documents.');
  else if (source === 'spec') io.note(`${baseUrl} does not list its scopes; these are the ones the platform documents.`);
  io.out(
    table(
      output.scopes.map((s) => [s.name, s.description ?? '', s.granted ? 'granted' : '']),
      [io.bold, io.dim, io.green],
    ),
  );
  if (ctx.env.PLAT_TOKEN?.trim()) io.note('PLAT_TOKEN is set: plat cannot tell which of these scopes it carries.');
  else if (sessionHere) {
    const count = output.scopes.filter((s) => s.granted).length;
    io.note(`Profile ${profile.name} holds ${count} of ${output.scopes.length}. To add one: plat login${profile.loginMethod === 'device' ? ' --device' : ''} --add-scope <scope>`);
  } else io.note('Not logged in: plat login --scope <scope> asks for the ones you need.');
}
