/**
 * The API's operations as its OpenAPI description (`/openapi.json`) lists them, reduced to what plat uses:
 * method, path, summary, and the scopes a token needs — and, for `plat op`, each operation's parameters, request
 * body schema and description. Cached in the config dir's cache/ (like discovery) as two files: the small index
 * that `plat call`'s check, listings and most completions read on every run, and beside it the details only
 * `plat op` reads (a large API's schemas would otherwise cost every `plat call` the time to parse them).
 */
import { join } from 'node:path';
import { ensurePrivateDir, readJsonFile, writeFileAtomic } from '../store/atomic.js';
import { cacheKey } from '../store/paths.js';
import { sanitize } from '../terminal/text.js';
import { bodyOf, newExpansionBudget, parametersOf, SCOPE_TOKEN, securityAlternatives, type BodySpec, type ParamSpec, type RefusedParam } from './operation-shape.js';

export const OPENAPI_PATH = '/openapi.json';
/** `plat op` fetches the document again (conditionally, with its ETag) after this long. */
export const API_TTL_MS = 60 * 60 * 1000;
/**
 * The cached index's shape; a cache of another shape is read as no cache. 5: header parameters the header rule
 * refuses are kept apart (refusedHeaders), so a change of that rule (src/http/header-rule.ts) bumps it too.
 */
const INDEX_FORMAT = 5;
/** `plat call` checks against a cached document only while it is younger than this. */
export const CALL_CHECK_MAX_AGE_MS = 24 * 60 * 60 * 1000;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface Operation {
  /** Upper case: GET, POST, … */
  method: string;
  /** Relative to the base URL, as `plat call` takes it; templated segments kept (`/api/status/{code}`). */
  path: string;
  summary: string | null;
  operationId: string | null;
  /** The scopes a token needs (the first OAuth requirement); [] none; null when the document does not say. */
  scopes: string[] | null;
  /** Whether the document allows calling it without a token; null when it does not say. */
  anonymous: boolean | null;
}

/** An operation as the index lists it. */
export interface ListedOperation extends Operation {
  /** Security requirement alternatives, each the scopes a token needs ([] none); null when the document does not say. */
  security: string[][] | null;
}

/** What `plat op` needs besides: the cached details. */
interface OperationExtras {
  /** The longer description, line breaks kept; null when there is none. */
  description: string | null;
  parameters: ParamSpec[];
  /** Header parameters plat never fills (the header rule), with why: shown, never offered. */
  refusedHeaders: RefusedParam[];
  body: BodySpec | null;
}

export interface OperationDetail extends ListedOperation, OperationExtras {}

/** The listing's members of an operation, without its cached details (what the listing and `plat op --json` carry). */
export function listedOnly({ method, path, summary, operationId, scopes, anonymous, security }: ListedOperation): ListedOperation {
  return { method, path, summary, operationId, scopes, anonymous, security };
}

export interface ApiIndex<Op extends ListedOperation = ListedOperation> {
  format?: number;
  baseUrl: string;
  /** Where the document was read from. */
  source: string;
  /** When the copy was last confirmed (downloaded, or renewed by a 304). */
  fetchedAt: number;
  /** When the document was downloaded and reduced: the details file must say the same, or it belongs to another. */
  builtAt: number;
  /** The document's ETag, sent back as If-None-Match when the cache is refreshed. */
  etag?: string;
  title: string | null;
  version: string | null;
  operations: Op[];
}

/** The index with every operation's details, as `plat op` reads it. */
export type FullApiIndex = ApiIndex<OperationDetail>;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text from the document, on one line, sanitized and bounded: it is shown in a terminal. */
function text(value: unknown, max = 200): string | null {
  if (typeof value !== 'string') return null;
  const s = sanitize(value.slice(0, max * 4), 0).replace(/\s+/g, ' ');
  if (!s) return null;
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The path the document's first server adds below the base URL (`/v1`), or ''. */
function serverPrefix(doc: Json, baseUrl: string): string {
  const servers = Array.isArray(doc.servers) ? doc.servers : [];
  const first = servers.find(isObject);
  if (!first || typeof first.url !== 'string' || first.url.includes('{')) return '';
  let url: URL;
  try {
    url = new URL(first.url, `${baseUrl}/`);
  } catch {
    return '';
  }
  const base = new URL(baseUrl);
  if (url.origin !== base.origin) return '';
  const basePath = base.pathname.replace(/\/+$/, '');
  const serverPath = url.pathname.replace(/\/+$/, '');
  return pathBelow(basePath, serverPath) ?? '';
}

/**
 * What `path` adds below `basePath` ('' for the base itself), or undefined when it is not below it. Whole segments
 * only: `/school2/v1` is not below `/school`.
 */
export function pathBelow(basePath: string, path: string): string | undefined {
  const base = basePath.replace(/\/+$/, '');
  if (path === base) return '';
  return path.startsWith(`${base}/`) ? path.slice(base.length) : undefined;
}

/** Names of the security schemes that carry scopes (OAuth 2.0, OpenID Connect); undefined: the document has none. */
function scopedSchemes(doc: Json): Set<string> | undefined {
  const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : undefined;
  if (!schemes) return undefined;
  const names = Object.entries(schemes)
    .filter(([, s]) => isObject(s) && (s.type === 'oauth2' || s.type === 'openIdConnect'))
    .map(([name]) => name);
  return new Set(names);
}

function securityOf(requirements: unknown, scoped: Set<string> | undefined): Pick<Operation, 'scopes' | 'anonymous'> {
  if (!Array.isArray(requirements)) return { scopes: null, anonymous: null };
  const objects = requirements.filter(isObject);
  const anonymous = objects.some((r) => Object.keys(r).length === 0);
  const withToken = objects.find((r) => Object.keys(r).length > 0);
  if (!withToken) return { scopes: [], anonymous: anonymous || objects.length === 0 };
  const scopes = new Set<string>();
  for (const [scheme, list] of Object.entries(withToken)) {
    if (scoped && !scoped.has(scheme)) continue;
    if (Array.isArray(list)) for (const s of list) if (typeof s === 'string' && SCOPE_TOKEN.test(s)) scopes.add(s);
  }
  return { scopes: [...scopes], anonymous };
}

/** Reduces an OpenAPI 3 (or Swagger 2) document; throws a plain Error when it is not one. */
export function buildIndex(doc: unknown, baseUrl: string, source: string, fetchedAt: number): FullApiIndex {
  if (!isObject(doc) || !isObject(doc.paths)) throw new Error('it has no "paths"');
  const version = typeof doc.openapi === 'string' ? doc.openapi : typeof doc.swagger === 'string' ? doc.swagger : undefined;
  if (version === undefined) throw new Error('it names no OpenAPI version ("openapi": "3.x")');
  if (!/^(3\.\d+|2\.0)(\.\d+)?([-+].*)?$/.test(version)) throw new Error(`it is OpenAPI ${sanitize(version, 20)}, which plat does not read`);
  const prefix = serverPrefix(doc, baseUrl);
  const scoped = scopedSchemes(doc);
  const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : undefined;
  const operations: OperationDetail[] = [];
  const budget = newExpansionBudget();
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/') || !isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      operations.push({
        method: method.toUpperCase(),
        path: `${prefix}${path}`,
        summary: text(op.summary) ?? text(item.summary) ?? text(op.description),
        operationId: text(op.operationId, 100),
        ...securityOf(op.security ?? doc.security, scoped),
        description: typeof op.description === 'string' ? sanitize(op.description, 2000, { multiline: true }) || null : null,
        security: securityAlternatives(op.security ?? doc.security, schemes),
        ...parametersOf(item, op, doc, budget),
        body: bodyOf(op, doc, budget),
      });
    }
  }
  const info = isObject(doc.info) ? doc.info : {};
  return { format: INDEX_FORMAT, baseUrl, source, fetchedAt, builtAt: fetchedAt, title: text(info.title), version: text(info.version, 50), operations };
}

function templateScore(template: string): number {
  return template.replace(/\{[^}]*\}/g, '').length;
}

/**
 * Whether a request path fits a path template (`/courses/{courseId}`): a parameter stands for one non-empty segment.
 * Compared segment by segment, so the usual template costs no regular expression (plat call checks every path of
 * the cached document on each run: building one per template cost ~1 ms of its start-up).
 */
function templateMatches(template: string, path: string): boolean {
  const parts = template.split('/');
  const segments = path.split('/');
  if (parts.length !== segments.length) return false;
  return parts.every((part, i) => (part.includes('{') ? segmentMatches(part, segments[i]!) : part === segments[i]));
}

function segmentMatches(part: string, segment: string): boolean {
  if (part.startsWith('{') && part.indexOf('}') === part.length - 1) return segment.length > 0;
  // A parameter inside a segment (`{name}.json`, `v{version}`): the literals between the parameters, each found at
  // its leftmost place after at least one character per parameter. No regular expression: a template of the server's
  // with many parameters in one segment (`{a}{b}{c}…`) made a backtracking one take exponential time on every call.
  // Leftmost placement is exact when every parameter stands for "one or more characters": linear in the segment.
  const literals = part.split(/\{[^}]*\}/);
  if (literals.length === 1) return part === segment; // an unclosed brace is literal text
  const first = literals[0]!;
  const last = literals[literals.length - 1]!;
  if (!segment.startsWith(first)) return false;
  let at = first.length;
  for (let i = 1; i < literals.length - 1; i++) {
    const found = segment.indexOf(literals[i]!, at + 1);
    if (found < 0) return false;
    at = found + literals[i]!.length;
  }
  // The last parameter takes at least one character before the final literal.
  return segment.length - last.length >= at + 1 && segment.endsWith(last);
}

const normalise = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path);

/**
 * The operations on the document's path that matches `path` (a request path relative to the base URL, without
 * the query); a literal path wins over a templated one. Empty when the document does not list the path.
 */
export function operationsFor(index: ApiIndex, path: string): Operation[] {
  const wanted = normalise(path);
  const candidates = [...new Set(index.operations.map((op) => op.path))].filter((template) => templateMatches(normalise(template), wanted));
  if (candidates.length === 0) return [];
  candidates.sort((a, b) => templateScore(b) - templateScore(a));
  return index.operations.filter((op) => op.path === candidates[0]);
}

/**
 * What a session holding `held` lacks for the operation; [] when nothing (or the document does not say). With
 * alternative requirements, nothing when any one is met, else what the first one lacks.
 */
export function missingScopes(op: Operation & { security?: string[][] | null }, held: readonly string[]): string[] {
  const scoped = (op.security ?? []).filter((alt) => alt.length > 0);
  if (scoped.some((alt) => alt.every((s) => held.includes(s)))) return [];
  return (op.scopes ?? []).filter((s) => !held.includes(s));
}

/** An operation that needs no authentication: it says so (`security: []` alternatives), and every alternative agrees. */
export function isPublicOperation(op: { security?: string[][] | null }): boolean {
  return Array.isArray(op.security) && op.security.length > 0 && op.security.every((alt) => alt.length === 0);
}

function apiCachePath(configDir: string, baseUrl: string): string {
  return join(configDir, 'cache', `openapi-${cacheKey(baseUrl)}.json`);
}

/** The details beside the index: one entry per operation, in the index's order. */
function apiDetailsPath(configDir: string, baseUrl: string): string {
  return join(configDir, 'cache', `openapi-${cacheKey(baseUrl)}.details.json`);
}

interface CachedDetails {
  format: number;
  baseUrl: string;
  builtAt: number;
  operations: OperationExtras[];
}

/** The cached index for the base URL if it is younger than `maxAgeMs` (Infinity: any age); never throws. */
export async function readCachedIndex(configDir: string, baseUrl: string, now: number, maxAgeMs: number): Promise<ApiIndex | undefined> {
  try {
    const cached = (await readJsonFile(apiCachePath(configDir, baseUrl), { oftenMissing: true })) as ApiIndex | undefined;
    if (
      !isObject(cached) ||
      cached.format !== INDEX_FORMAT ||
      cached.baseUrl !== baseUrl ||
      typeof cached.fetchedAt !== 'number' ||
      typeof cached.builtAt !== 'number' ||
      !Array.isArray(cached.operations)
    ) {
      return undefined;
    }
    if (now - cached.fetchedAt > maxAgeMs || cached.fetchedAt > now + 60_000) return undefined;
    return cached;
  } catch {
    return undefined;
  }
}

/** The cached index with its details; undefined when either is missing, stale or they belong to different documents. */
export async function readCachedFullIndex(configDir: string, baseUrl: string, now: number, maxAgeMs: number): Promise<FullApiIndex | undefined> {
  const index = await readCachedIndex(configDir, baseUrl, now, maxAgeMs);
  if (!index) return undefined;
  try {
    const details = (await readJsonFile(apiDetailsPath(configDir, baseUrl))) as CachedDetails | undefined;
    if (
      !isObject(details) ||
      details.format !== INDEX_FORMAT ||
      details.baseUrl !== baseUrl ||
      details.builtAt !== index.builtAt ||
      !Array.isArray(details.operations) ||
      details.operations.length !== index.operations.length
    ) {
      return undefined;
    }
    return { ...index, operations: index.operations.map((op, i) => ({ ...op, ...details.operations[i]! })) };
  } catch {
    return undefined;
  }
}

/**
 * Caches the index: the details first, then the index that names them (by builtAt), so a run cut off between the
 * two leaves an index whose details do not match, which reads as "no details" and is fetched again.
 * A config dir that cannot be written costs the next run a download, nothing more.
 */
export async function writeCachedIndex(configDir: string, index: ApiIndex | FullApiIndex): Promise<void> {
  try {
    await ensurePrivateDir(configDir);
    await ensurePrivateDir(join(configDir, 'cache'));
    const operations = index.operations.map(listedOnly);
    const withDetails = index.operations as Array<ListedOperation & Partial<OperationExtras>>;
    if (withDetails.every((op) => op.parameters !== undefined)) {
      const details: CachedDetails = {
        format: INDEX_FORMAT,
        baseUrl: index.baseUrl,
        builtAt: index.builtAt,
        operations: withDetails.map(({ description, parameters, refusedHeaders, body }) => ({ description: description ?? null, parameters: parameters ?? [], refusedHeaders: refusedHeaders ?? [], body: body ?? null })),
      };
      await writeFileAtomic(apiDetailsPath(configDir, index.baseUrl), JSON.stringify(details));
    }
    await writeFileAtomic(apiCachePath(configDir, index.baseUrl), JSON.stringify({ ...index, operations }));
  } catch {
    // see above
  }
}

/** By operationId; case-insensitively when that finds exactly one. */
export function findOperation<Op extends ListedOperation>(index: ApiIndex<Op>, id: string): (Op & { operationId: string }) | undefined {
  const named = index.operations.filter((op): op is Op & { operationId: string } => op.operationId !== null);
  const exact = named.find((op) => op.operationId === id);
  if (exact) return exact;
  const folded = named.filter((op) => op.operationId.toLowerCase() === id.toLowerCase());
  return folded.length === 1 ? folded[0] : undefined;
}
