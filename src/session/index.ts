/**
 * The session's front door: the verbs the commands, the library (src/library/) and the completion candidates may
 * call, and the shapes they see. None of them imports any other file of the session (test/repo/layers.test.ts holds
 * that), as the MCP SDK's `auth()` is the one call a client makes while discovery, registration, authorization and
 * the token exchange stay steps behind it. (src/main.ts, the entry, reads profile/invocation.ts itself: it picks the profile
 * before any command runs, and loads no more of the session for it.)
 *
 * Why one door: a caller that picked its own step (load the stored session, refresh it, bind it) could skip a rule
 * that step does not know of. Every verb here that yields or sends a token goes one way, profile/binding.ts's bindSession:
 * PLAT_TOKEN wins; a stored session is used only for the platform (origin) it was issued for; an ended session is
 * not swapped for anonymous access; and only then is the stored token loaded and, under the cross-process lock,
 * refreshed (tokens/refresh.ts). bindSession works out the invocation's target (profile, platform, credentials with their
 * store) in one go, and the verb hands it down to the client or the token step instead of each step working out
 * its part again. What stays inside: loading a stored session (loadSession), refreshing or binding one by
 * hand, the login and logout flows' steps, the token store.
 *
 * Start-up: the commands scripts run most (call, token, whoami) load this module, and dist/plain-<command>.cjs carries only
 * what they use (esbuild drops the verbs nobody in a bundle calls). So what only some commands need — the login,
 * logout, batch and paging engines — is loaded with import() inside its verb, never here at the top.
 */
import type * as fs from 'node:fs';
import type { Context } from '../context.js';
import { PlatError, UsageError } from '../errors.js';
import { validateProfileName } from '../store/paths.js';
import type { Profile, StoredSession, TokenStoreKind } from '../store/types.js';
import { loadSession } from './tokens/access.js';
import { refreshSession } from './tokens/refresh.js';
import { parseBaseUrl } from './profile/base-url.js';
import { bindSession, getAccessToken, requireSession } from './profile/binding.js';
import { getDiscovery, readCachedDiscovery } from './discovery/discovery-cache.js';
import { resolveInvocation } from './profile/invocation.js';
import { cappedLifetimeNote, noRefreshTokenNote } from './tokens/no-refresh-token.js';
import { parseJsonPath, parseNextHint } from './paging/detect.js';
import { loadProfile, requireBaseUrl, resolveBaseUrl } from './profile/profile.js';
import { assertProfileExists, unknownProfile } from './profile/profile-names.js';
import { header, openApiClient, resolveApiUrl } from './request.js';
import { responseError } from './response-error.js';
import { suggestCommand, type SuggestOptions } from './suggest.js';
import { whoAmI } from './userinfo.js';
// Types only, erased from the bundles: the shapes below are the steps' own, named here for the callers.
import type * as Bindings from './profile/binding.js';
import type * as Identity from './userinfo.js';
import type * as Logins from './login/options.js';
import type * as Logouts from './logout.js';
import type * as Paging from './paging/paginate.js';
import type * as Requests from './request.js';

// ---- The shapes ------------------------------------------------------------------------------------------------

/** Where a token came from: PLAT_TOKEN, or the profile's stored session (with its expiry and scopes). */
export type TokenSource = Bindings.TokenSource;
/** One request for the authenticated path: an absolute URL, headers, a body that can be made again for a retry. */
export type ApiRequest = Requests.ApiRequest;
/** A response, with the token (if any) that went with the request. */
export type ApiResponse = Requests.ApiResponse;
/** The authenticated-request path of one invocation, bound to its platform and credentials (openClient). */
export type ApiClient = Requests.ApiClient;
/** A shared pace for requests (governRequests): awaited before every attempt, told of every 429/503 wait. */
export type RequestGovernor = Requests.RequestGovernor;
/** The pages of a list, read one at a time (readPages); `limited` says whether a limit stopped them. */
export type Pages = Paging.Pages;
/** One page: its items, its URL and number. */
export type Page = Paging.Page;
/** Who the session belongs to, and from where plat knows it (identify). */
export type WhoAmI = Identity.WhoAmI;
/** Which client a login acts as, as the command's flags named it. */
export type ClientChoice = Logins.ClientChoice;
/** What `plat logout` did for one profile: whether it was signed in, and whether its tokens were revoked. */
export type LogoutResult = Logouts.LogoutResult;

/**
 * What `plat status` shows of a profile's stored session: no token. Whether the token works is asked with check(),
 * which goes the one way every token goes (PLAT_TOKEN refuses it; --base-url naming another platform refuses it).
 */
export interface StoredSessionView {
  scopes: string[];
  expiresAt: number | undefined;
  tokenStore: TokenStoreKind;
  /** Where the token store keeps it ("OS keychain", a file's path). */
  tokenStoreLocation: string;
  /** `DPoP` for a session bound to its key (RFC 9449), else `Bearer`. */
  tokenType: 'DPoP' | 'Bearer';
  /** The bound key's thumbprint (RFC 7638), for DPoP. */
  dpopJkt?: string;
  /** Asks the issuer's UserInfo with the session's token; `refreshed` when plat had to refresh the token first. */
  check(): Promise<{ who: WhoAmI; refreshed: boolean }>;
}

// ---- Tokens and requests: every one through bindSession ---------------------------------------------------------

/**
 * A token for the invocation's platform (`plat token`, `plat exec`, the library's `token()`), exit 4 without one:
 * PLAT_TOKEN as given, or the stored session's when the session is for the platform named, refreshed first when it
 * is about to expire or would not last `minTtlMs` (an AuthError when even a fresh one would not).
 */
export async function accessToken(ctx: Context, options: { minTtlMs?: number } = {}): Promise<TokenSource> {
  return getAccessToken(ctx, { binding: await bindSession(ctx), minTtlMs: options.minTtlMs });
}

/**
 * The one authenticated-request path (plat call, op, batch, mcp and the library's fetch, paginate and batch): the
 * session's token goes only to its own origin, is refreshed before expiry and once more on a 401, and retries
 * follow Retry-After. `anonymous`: no token at all; `required`: exit 4 without a session; `auto`: anonymous with a
 * note when there is none, but never in place of a session that ended or belongs to another platform. `profile`:
 * the invocation's profile as currentProfile() gave it, when the command has it already (not read again).
 */
export async function openClient(ctx: Context, options: { auth: 'auto' | 'anonymous' | 'required'; profile?: Profile }): Promise<ApiClient> {
  return openApiClient(ctx, { auth: options.auth, binding: await bindSession(ctx, options.profile) });
}

/** A path resolved against the platform's base URL, or an absolute http(s) URL as is; `whatToDo` ends the error. */
export function apiUrl(target: string | URL, baseUrl: string | undefined, whatToDo: string): URL {
  return resolveApiUrl(target, baseUrl, whatToDo);
}

/** A response header, repeated values joined as HTTP joins them. */
export function responseHeader(response: ApiResponse, name: string): string | undefined {
  return header(response, name);
}

/** What a finished response means for the exit code: undefined below 400, else the error plat prints (4, 5 or 1). */
export function responseFailure(ctx: Context, request: ApiRequest, response: ApiResponse) {
  return responseError(ctx, request, response);
}

/** The pages of the list `first` asks for, through the client (its origin rule holds for every next link). */
export async function readPages(ctx: Context, client: ApiClient, first: ApiRequest, options: Paging.PaginateOptions = {}): Promise<Pages> {
  const { Pages } = await import('./paging/paginate.js');
  return new Pages(ctx, client, first, options);
}

/** Every item of every page, in order (the library's `paginate()`): one page is held at a time. */
export async function* pageItems(ctx: Context, client: ApiClient, first: ApiRequest, options: Paging.PaginateOptions = {}): AsyncGenerator<unknown> {
  const { paginateItems } = await import('./paging/paginate.js');
  yield* paginateItems(ctx, client, first, options);
}

/** `--items` / `items`: where a page keeps its list, as a path (`data.items`, `results[0]`); a UsageError naming `flag`. */
export function itemsPath(text: string, flag: string) {
  return parseJsonPath(text, flag);
}

/** `--next` / `next`: where a page keeps its cursor and the query parameter that sends it back (`meta.next=cursor`). */
export function nextPageHint(text: string) {
  return parseNextHint(text);
}

/**
 * Whose requests these are, as a record of them (plat batch's journal) names them: the platform's origin and the
 * profile, none when PLAT_TOKEN stands in for the profile's session (whose token it is plat cannot know).
 */
export function requestsOf(ctx: Context, target: { baseUrl: string; profile: string }): { origin: string; profile: string | null } {
  return { origin: new URL(target.baseUrl).origin, profile: ctx.env.PLAT_TOKEN?.trim() ? null : target.profile };
}

// ---- The session itself ----------------------------------------------------------------------------------------

/**
 * Who the session (or PLAT_TOKEN) belongs to, from the issuer's UserInfo, else the ID token's claims; `profile`:
 * another profile than the invocation's; `quiet`: no note when the ID token answers; `asker`: who wants to know, as a
 * step-up question names it.
 */
export async function identify(ctx: Context, options: { profile?: Profile; quiet?: boolean; asker?: string } = {}): Promise<WhoAmI> {
  return whoAmI(ctx, options);
}

/**
 * The scopes this invocation's token is known to hold on `baseUrl` (the profile's own platform when undefined), read
 * from the profile with no token loaded — what `plat scopes` and `plat scopes plan` show as held. A stored session
 * counts only for the platform that granted it; PLAT_TOKEN's scopes are unknown, so with it none are (`session`
 * false).
 */
export function heldScopes(ctx: Context, profile: Profile, baseUrl: string | undefined): { session: boolean; scopes: readonly string[] } {
  const session = profile.loggedIn === true && profile.baseUrl === (baseUrl ?? profile.baseUrl) && !ctx.env.PLAT_TOKEN?.trim();
  return { session, scopes: session ? (profile.scopes ?? []) : [] };
}

const profileFiles = new WeakMap<Context, string>();

/**
 * A cheap mark of the invocation's profile file (identity, size and change time; 'none' when there is none): a
 * long-running adapter (plat proxy) compares it before each request, and opens a new client (openClient) when
 * another plat has signed in, out, or refreshed since, instead of reading the token store on every request.
 */
export async function profileMark(ctx: Context): Promise<string> {
  // The path is the same for the whole run (the profile is chosen at start): joined once, not per request.
  let file = profileFiles.get(ctx);
  if (file === undefined) profileFiles.set(ctx, (file = (await ctx.profiles()).pathOf(ctx.globals.profile)));
  const stats = (process.getBuiltinModule('node:fs') as typeof fs).statSync(file, { throwIfNoEntry: false });
  return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}` : 'none';
}

/** `plat refresh`: the stored session for this platform, refreshed now whatever its expiry. */
export async function refreshNow(ctx: Context): Promise<{ profile: Profile; session: StoredSession }> {
  if (ctx.env.PLAT_TOKEN) throw new UsageError('PLAT_TOKEN is set: that token cannot be refreshed by plat. Unset it to refresh the stored session.');
  const active = await requireSession(ctx);
  const { profile, session } = await refreshSession(ctx, active, { onlyIfUnchanged: false });
  return { profile, session };
}

/**
 * What the token store holds for `profile` (plat status lists every profile, whichever platform and whatever
 * PLAT_TOKEN says), or undefined when nothing; an unreadable store throws, exit 4. The token itself stays here.
 */
export async function describeSession(ctx: Context, profile: Profile): Promise<StoredSessionView | undefined> {
  const active = await loadSession(ctx, profile);
  if (!active) return undefined;
  const stored = active.session.accessToken;
  return {
    scopes: active.session.scopes,
    expiresAt: active.session.expiresAt,
    tokenStore: active.store.kind,
    tokenStoreLocation: active.store.location,
    tokenType: active.session.tokenType === 'DPoP' ? 'DPoP' : 'Bearer',
    dpopJkt: active.session.tokenType === 'DPoP' ? active.profile.dpopJkt : undefined,
    check: async () => {
      if (ctx.env.PLAT_TOKEN) throw new PlatError('PLAT_TOKEN is set, so the stored session was not checked');
      const who = await whoAmI(ctx, { profile, quiet: true });
      return { who, refreshed: who.source.kind === 'session' && who.source.session.accessToken !== stored };
    },
  };
}

/** `plat login`: discovery, the client, consent (browser or device), the token exchange, stored under the lock. */
export async function signIn(ctx: Context, options: Logins.LoginOptions) {
  const { login } = await import('./login/login.js');
  return login(ctx, options);
}

/** `plat logout`: the profile's tokens revoked at their issuer (unless `revoke` is false) and removed here. */
export async function signOut(ctx: Context, name: string, options: { revoke: boolean }): Promise<LogoutResult> {
  const { logoutProfile } = await import('./logout.js');
  return logoutProfile(ctx, name, options);
}

/** `plat logout --forget`: the profile itself goes (its platform, registration, user, kept secret). */
export async function forget(ctx: Context, name: string): Promise<void> {
  const { forgetProfile } = await import('./logout.js');
  await forgetProfile(ctx, name);
}

/**
 * What a person is told about a new or refreshed session: `capped` when the server's lifetime was past what plat
 * keeps, `noRefreshToken` when it ends with its access token.
 */
export function sessionNotes(session: StoredSession, now: number): { capped?: string; noRefreshToken?: string } {
  return { capped: cappedLifetimeNote(session), noRefreshToken: noRefreshTokenNote(session, now) };
}

// ---- Profiles and platforms -------------------------------------------------------------------------------------

/** The profile this invocation acts on; `mayBeNew` (login, completion): a name with no profile yet is fine. */
export async function currentProfile(ctx: Context, options: { mayBeNew?: boolean } = {}): Promise<Profile> {
  return loadProfile(ctx, { mayBeNew: options.mayBeNew });
}

/** --base-url, then PLAT_BASE_URL, then the profile's own; undefined when none is known. */
export function platformOf(ctx: Context, profile: Profile | undefined): string | undefined {
  return resolveBaseUrl(ctx, profile);
}

/** As platformOf, and a usage error naming --base-url when none is known. */
export function requirePlatform(ctx: Context, profile: Profile | undefined): string {
  return requireBaseUrl(ctx, profile);
}

/** Exit 2 with the closest name when the invocation's profile does not exist (`default` always does). */
export async function requireProfile(ctx: Context): Promise<void> {
  await assertProfileExists(ctx);
}

/** The usage error for a profile named as an argument that is not among `existing`. */
export function noSuchProfile(ctx: Context, name: string, existing: string[]): UsageError {
  return unknownProfile(ctx, name, existing);
}

/** A profile name typed as an argument, checked by the rules --profile follows. */
export function validProfileName(name: string): string {
  return validateProfileName(name);
}

/** `plat switch`: the profile later commands use when neither --profile nor PLAT_PROFILE names one. */
export async function switchTo(ctx: Context, name: string) {
  const { switchProfile } = await import('./profile/switch.js');
  return switchProfile(ctx, name);
}

/** The platform's metadata (RFC 9728, RFC 8414, OIDC), cached for an hour; `refresh` asks again. */
export async function discover(ctx: Context, baseUrl: string, options: { refresh?: boolean } = {}) {
  return getDiscovery(ctx, baseUrl, options);
}

/** The discovery cache whatever its age, never the network: what a Tab press may read. */
export async function cachedDiscovery(ctx: Context, baseUrl: string) {
  return readCachedDiscovery(ctx, baseUrl, { maxAgeMs: Infinity });
}

/** The command a message tells the person to run, for the same profile and platform, shell-quoted. */
export function suggest(ctx: Context, args: string[], options: SuggestOptions = {}): string {
  return suggestCommand(ctx, args, options);
}

// ---- The library's invocation ----------------------------------------------------------------------------------

/** Which profile and config dir a program's client acts on, chosen as the command chooses them. */
export function invocationOf(env: Record<string, string | undefined>, options: { profile?: string; home: string }) {
  return resolveInvocation(env, options);
}

/** A base URL as the user gave it, checked (https unless loopback, no credentials, query or fragment) and normalised. */
export function normaliseBaseUrl(input: string): string {
  return parseBaseUrl(input);
}

/**
 * Whether a token is bound to the session's DPoP key (RFC 9449): another program could not send it as a bearer
 * token, so `plat token` and `plat exec` do not hand it out as one (boundTokenError says what to use instead).
 */
export function isDpopBound(source: TokenSource): boolean {
  return source.kind === 'session' && source.session.tokenType === 'DPoP';
}

/** The one sentence for a bound token asked for as a bearer token (plat token, plat exec without --proxy): exit 2. */
export function boundTokenError(ctx: Context, source: TokenSource): UsageError {
  const profile = source.kind === 'session' ? source.profile.name : undefined;
  return new UsageError(
    "This session's token is bound to a key plat keeps (DPoP, RFC 9449): another program could not use it as a bearer token, so plat does not hand it out. " +
      `Let the program call the platform through plat with plat proxy or plat exec --proxy -- <command>, or sign in for bearer tokens with ${suggestCommand(ctx, ['login', '--no-dpop'], { profile })}.`,
  );
}

/**
 * A fresh DPoP proof for one request to the session's platform with the token in `source` (plat token
 * --dpop-proof, for a program that makes its requests itself), and the key's thumbprint. Only for the platform's
 * origin: a proof is worth something only with the token, which goes nowhere else.
 */
export async function dpopProofFor(ctx: Context, source: TokenSource, request: { method: string; url: string; nonce?: string }): Promise<{ proof: string; jkt: string }> {
  if (source.kind !== 'session' || !source.session.dpopKey) throw new UsageError('--dpop-proof is for a DPoP-bound session, and this one holds a bearer token: send it as Authorization: Bearer.');
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw new UsageError(`--dpop-proof expects "METHOD URL" with an absolute URL; got "${request.url}".`);
  }
  if (!/^[A-Za-z]+$/.test(request.method)) throw new UsageError(`--dpop-proof expects "METHOD URL" with an HTTP method; got "${request.method}".`);
  const origin = new URL(source.profile.baseUrl!).origin;
  if (url.origin !== origin) throw new UsageError(`--dpop-proof makes proofs for the session's platform (${origin}) only; ${url.origin} is not it.`);
  const { dpopProof, dpopThumbprint } = await import('../oauth/dpop.js');
  const key = source.session.dpopKey;
  return { proof: dpopProof(key, { method: request.method, url, accessToken: source.token, nonce: request.nonce, now: ctx.now() }), jkt: dpopThumbprint(key) };
}
