import type { Context } from '../../context.js';
import { currentProfile, requirePlatform, sessionNotes, signIn, type ClientChoice } from '../../session/index.js';
import { describeUser, expiryText, iso, printJson, userJson } from '../shared/format.js';
import { parsePositiveInt } from '../../requests/values.js';
import { UsageError } from '../../errors.js';

/** The client the flags name; combinations that name two clients, or a secret without a client, are usage errors. */
function clientChoice(flags: Pick<LoginFlags, 'clientId' | 'clientSecretStdin' | 'clientMetadataUrl'>): ClientChoice {
  if (flags.clientSecretStdin && !flags.clientId) throw new UsageError('--client-secret-stdin needs --client-id.');
  if (flags.clientMetadataUrl !== undefined && flags.clientId) {
    throw new UsageError('--client-metadata-url and --client-id name two different clients; pass one of them.');
  }
  if (flags.clientMetadataUrl !== undefined) return { kind: 'metadata-document', url: flags.clientMetadataUrl };
  if (flags.clientId) return { kind: 'registered', clientId: flags.clientId, secretOnStdin: Boolean(flags.clientSecretStdin) };
  return { kind: 'auto' };
}

function validateResource(resource: string): void {
  try {
    const url = new URL(resource);
    if (url.hash) throw new Error('fragment');
  } catch {
    throw new UsageError(`--resource must be an absolute URI without a fragment (RFC 8707): ${resource}`);
  }
}

/** The address of a protected-resource document (RFC 9728): an absolute http(s) URL. */
function validateResourceMetadata(address: string): void {
  let url: URL | undefined;
  try {
    url = new URL(address);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash) {
    throw new UsageError(`--resource-metadata must be the https:// address of the API's protected-resource metadata document (RFC 9728): ${address}`);
  }
}

export interface LoginFlags {
  scope?: string[];
  addScope?: string[];
  browser: boolean;
  port?: string;
  resource?: string;
  resourceMetadata?: string;
  clientId?: string;
  clientSecretStdin?: boolean;
  clientMetadataUrl?: string;
  timeout?: string;
  for?: string[];
  device?: boolean;
  /** false with --no-dpop. */
  dpop?: boolean;
}

export async function run(ctx: Context, flags: LoginFlags): Promise<void> {
  // Every check of the flags themselves happens here, before the session is asked for anything.
  const client = clientChoice(flags);
  if (flags.resource !== undefined) validateResource(flags.resource);
  if (flags.resourceMetadata !== undefined) validateResourceMetadata(flags.resourceMetadata);
  if (flags.device && flags.port !== undefined) throw new UsageError('--port is for the browser login\'s callback listener; --device needs none. Drop one of them.');
  const forScopes = flags.for?.length ? await plannedScopes(ctx, flags.for) : undefined;
  const result = await signIn(ctx, {
    forScopes,
    scope: flags.scope,
    addScope: flags.addScope,
    browser: flags.browser,
    port: parsePositiveInt(flags.port, '--port', 65535),
    resource: flags.resource,
    resourceMetadata: flags.resourceMetadata,
    client,
    timeoutSeconds: parsePositiveInt(flags.timeout, '--timeout', 86_400) ?? 300,
    device: flags.device,
    dpop: flags.dpop,
  });
  const { profile, session } = result;
  const notes = sessionNotes(session, ctx.now());
  if (notes.capped) ctx.io.note(notes.capped);
  if (ctx.globals.json) {
    printJson(ctx.io, {
      profile: profile.name,
      baseUrl: profile.baseUrl,
      issuer: profile.issuer,
      user: userJson(profile.user),
      scopes: session.scopes,
      expiresAt: iso(session.expiresAt),
      clientId: profile.client?.clientId,
      tokenStore: profile.tokenStore,
    });
    if (notes.noRefreshToken) ctx.io.note(notes.noRefreshToken);
    return;
  }
  // The result, all of it on stdout (progress and warnings went to stderr before it).
  ctx.io.out(profile.user ? `Logged in to ${profile.baseUrl} as ${describeUser(profile.user)}\n` : `Logged in to ${profile.baseUrl} (the server does not say as whom: it issued no ID token)\n`);
  ctx.io.out(`Scopes: ${session.scopes.join(' ')}\n`);
  ctx.io.out(
    `Token ${expiryText(session.expiresAt, ctx.now())}; stored in ${profile.tokenStore === 'keychain' ? 'the OS keychain' : result.tokenStoreLocation}.\n`,
  );
  if (notes.noRefreshToken) ctx.io.note(notes.noRefreshToken);
}

/** `--for`: the least set of scopes covering the operations, from the platform's /openapi.json (cached). */
async function plannedScopes(ctx: Context, values: string[]): Promise<string[]> {
  const { getApiIndex } = await import('../../catalogue/fetch-openapi.js');
  const { parseOperationIds, planFor } = await import('../scopes/plan.js');
  // login creates profiles: --for on a new one is planned against the base URL given.
  const profile = await currentProfile(ctx, { mayBeNew: true });
  const baseUrl = requirePlatform(ctx, profile);
  const held = profile.loggedIn && profile.baseUrl === baseUrl ? (profile.scopes ?? []) : [];
  const ids = parseOperationIds(values);
  const plan = planFor(await getApiIndex(ctx, baseUrl), ids, held);
  ctx.io.note(`${ids.join(', ')} need${plan.scopes.length > 0 ? `: ${plan.scopes.join(' ')}` : ' no scope'}.`);
  return plan.scopes;
}
