/**
 * `plat op [filter]` lists the API's operations; `plat op <operationId> --<param> value…` calls
 * one, with its parameters and body checked against the document first, then exactly as `plat call` does (same
 * output, flags, exit codes and origin rule: the request goes to call.ts's runPrepared). `plat op <operationId>
 * --help` describes the operation from the document.
 */
import type { Command } from 'commander';
import { getFullApiIndex } from '../../catalogue/fetch-openapi.js';
import { findOperation, isPublicOperation, type ApiIndex } from '../../catalogue/openapi.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { currentProfile, openClient, requirePlatform } from '../../session/index.js';
import { didYouMean, sanitize } from '../../terminal/text.js';
import type { CallFlags } from '../../requests/prepare.js';

interface OpFlags extends CallFlags {
  param?: string[];
  refresh?: boolean;
}

/**
 * `words`: everything after `plat op` but plat's global options, as typed — an operationId or a filter, the
 * operation's `--<name> value` parameters and plat call's options, parsed in command.ts once the operation is
 * known. `command`: plat op's own (op.define.ts), for its settings and its help.
 */
export async function run(ctx: Context, command: Command, words: string[]): Promise<void> {
  const { parseLeading, parseFilter, parseOperation } = await import('./command.js');
  const leading = parseLeading(command, words);
  const { first, rest } = leading;
  if (first === undefined) {
    if (leading.help) command.help();
    return listing(ctx, undefined, leading.flags as OpFlags);
  }
  const profile = await currentProfile(ctx);
  const baseUrl = requirePlatform(ctx, profile);
  const index = await getFullApiIndex(ctx, baseUrl, { refresh: Boolean(leading.flags.refresh) });
  const op = findOperation(index, first);
  if (!op) {
    if (leading.help) command.help();
    // Not an operationId: a filter — unless what follows is parameters, or it filters nothing (a mistyped id).
    const words = parseFilter(command, [first, ...rest], leading.flags);
    if (!words) throw unknownOperation(index, first);
    const { matches } = await import('./list.js');
    if (!index.operations.some((o) => matches(o, words.filter))) throw unknownOperation(index, first);
    if (words.help) command.help();
    // --refresh after the filter: read the document again (the copy just read was the cached one).
    const again = Boolean(words.flags.refresh) && !leading.flags.refresh;
    return listing(ctx, words.filter, words.flags as OpFlags, again ? undefined : { index, baseUrl });
  }
  const parsed = parseOperation(command, op, rest, leading.flags, { help: leading.help });
  const flags = parsed.flags as OpFlags;
  const { prepareOpRequest } = await import('../../requests/operation.js');
  const { readAll, runPrepared } = await import('../call/call.js');
  const request = await prepareOpRequest(
    op,
    parsed.given,
    { headers: flags.header ?? [], fields: flags.field ?? [], typedFields: flags.typedField ?? [], input: flags.input },
    baseUrl,
    () => readAll(ctx.io.stdin),
  );
  // Checked: from here on it is plat call's request, sent through the session's one authenticated path.
  // A public operation (every alternative needs nothing, as `security: []` says) runs without a token: it needs no
  // session, and an ended or absent one is no reason to stop it.
  const client = await openClient(ctx, { auth: flags.anonymous || isPublicOperation(op) ? 'anonymous' : 'auto', profile });
  await runPrepared(ctx, client, request, flags);
}

async function listing(ctx: Context, filter: string | undefined, flags: OpFlags, loaded?: { index: ApiIndex; baseUrl: string }): Promise<void> {
  const { run: list } = await import('./list.js');
  await list(ctx, filter, { refresh: flags.refresh }, loaded);
}

export function unknownOperation(index: ApiIndex, id: string): UsageError {
  const ids = index.operations.map((op) => op.operationId).filter((x): x is string => x !== null);
  return new UsageError(`The platform's API has no operation "${sanitize(id, 100)}".${didYouMean(id, ids)} plat op lists them (plat op --refresh reads the document again).`);
}

