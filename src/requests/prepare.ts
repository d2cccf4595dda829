/**
 * Turning `plat call` arguments into a request: method, URL (relative to the base URL or absolute), headers,
 * -f/-F fields (built as gh builds them, ../fields.ts: query on GET/HEAD/DELETE, JSON body otherwise) and --input. Pure apart from reading @files.
 */
import { createReadStream, promises as fs } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { apiUrl, type ApiRequest } from '../session/index.js';
import { parsePositiveInt } from './values.js';
import { UsageError } from '../errors.js';
import { headerRecord, TOKEN } from './headers.js';
import { addField, appendQuery, emptyTree, splitField } from './fields.js';

/** The flags of plat call that shape the response as JSON (commands/call/json.ts): paging and --jq. */
interface JsonOutputFlags {
  paginate?: boolean;
  ndjson?: boolean;
  slurp?: boolean;
  maxPages?: string;
  maxItems?: string;
  items?: string;
  next?: string;
  jq?: string;
}

/** Every flag of plat call (and of plat op, which behaves as it). */
export interface CallFlags extends JsonOutputFlags {
  header?: string[];
  field?: string[];
  typedField?: string[];
  input?: string;
  include?: boolean;
  anonymous?: boolean;
  timeout?: string;
  retry?: string;
  /** plat api --silent: the response body is read and not printed. */
  silent?: boolean;
}

export interface CallArgs {
  method: string;
  target: string;
  headers: string[];
  fields: string[];
  typedFields: string[];
  input?: string;
  /** How the headers were given, for messages: `-H` (the default), or a batch line's `header`. */
  headerSource?: string;
}

export interface PreparedRequest {
  method: string;
  url: URL;
  /** Lower-case names. A plain object, not Headers: the Fetch globals cost start-up time. */
  headers: Record<string, string>;
  /** A JSON body built from fields; undefined when there is none or --input supplies it. */
  jsonBody?: string;
  /** --input: a path, or '-' for stdin. */
  inputFrom?: string;
  /** true when the URL is on the API's origin (only then does the token go with it). */
  sameOrigin: boolean;
}

const QUERY_METHODS = new Set(['GET', 'HEAD', 'DELETE']);
/** A field's file is held in memory as part of a JSON body: bounded, unlike --input, which streams. */
const MAX_FIELD_FILE_BYTES = 16 * 1024 * 1024;

export async function prepareRequest(args: CallArgs, baseUrl: string | undefined, readStdinText: () => Promise<string>): Promise<PreparedRequest> {
  const method = args.method.toUpperCase();
  if (!TOKEN.test(method)) throw new UsageError(`"${args.method}" is not an HTTP method.`);
  const url = apiUrl(args.target, baseUrl, 'log in first, or pass --base-url (or set PLAT_BASE_URL)');
  const sameOrigin = baseUrl !== undefined && url.origin === new URL(baseUrl).origin;
  const source = args.headerSource ?? '-H';
  const pairs = args.headers.map((raw) => {
    const i = raw.indexOf(':');
    const name = i > 0 ? raw.slice(0, i) : '';
    if (!TOKEN.test(name.trim())) throw new UsageError(`${source} expects "Name: value" (got "${raw}").`);
    return [name, raw.slice(i + 1)] as const;
  });
  const headers = headerRecord(pairs, sameOrigin, (problem) =>
    new UsageError(
      problem.kind === 'header-refused'
        ? `${source} ${problem.name} is not sent: ${problem.reason}.`
        : `${source} ${problem.name}: the value has a line break, control character or non-Latin-1 character.`,
    ),
  );
  // -f first, then -F, as gh reads them: the order decides which list item a `[]` field lands in.
  const fields = emptyTree();
  // Fields that become the query may repeat a key (`q=a&q=b`, as curl -G -d sends it); a body's may not.
  const inQuery = QUERY_METHODS.has(method) || args.input !== undefined;
  for (const raw of args.fields) {
    const field = splitField(raw, '-f');
    addField(fields, field, field.value, { repeat: inQuery });
  }
  for (const raw of args.typedFields) {
    const field = splitField(raw, '-F');
    addField(fields, field, field.value === undefined ? undefined : await typedValue(field.value, readStdinText), { repeat: inQuery });
  }
  let jsonBody: string | undefined;
  if (args.fields.length + args.typedFields.length > 0) {
    if (inQuery) {
      appendQuery(url.searchParams, fields, 'brackets', (name) => `Field ${name}`);
    } else {
      jsonBody = JSON.stringify(fields);
      headers['content-type'] ??= 'application/json';
    }
  }
  if (args.input !== undefined) headers['content-type'] ??= 'application/json';
  headers.accept ??= 'application/json, */*;q=0.8';
  return { method, url, headers, jsonBody, inputFrom: args.input, sameOrigin };
}


/** -F: numbers, true/false/null, @file (its contents as a string, @- for stdin); anything else stays a string. */
async function typedValue(value: string, readStdinText: () => Promise<string>): Promise<unknown> {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value)) {
    // Only numbers that survive the trip through a double: 9007199254740993 or 1e400 stay strings, unchanged.
    const n = Number(value);
    const exact = Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n));
    return exact ? n : value;
  }
  if (value.startsWith('@')) {
    const path = value.slice(1);
    if (path === '-') return readStdinText();
    let info: Awaited<ReturnType<typeof fs.stat>>;
    try {
      info = await fs.stat(path);
    } catch (error) {
      throw new UsageError(`Cannot read ${path} for -F: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
    // A FIFO would block plat (deaf to Ctrl-C while the read is pending), a device such as /dev/zero never ends.
    if (!info.isFile()) throw new UsageError(`-F ${path}: not a regular file. For a stream, send it as the body with --input.`);
    if (info.size > MAX_FIELD_FILE_BYTES) {
      throw new UsageError(`-F ${path}: ${info.size} bytes is more than a field can hold (${MAX_FIELD_FILE_BYTES / 1024 / 1024} MiB). Send it as the body with --input.`);
    }
    try {
      return await fs.readFile(path, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read ${path} for -F: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
  }
  return value;
}

export function toApiRequest(ctx: Context, request: PreparedRequest, flags: { timeout?: string; retry?: string }): ApiRequest {
  const timeoutSeconds = parsePositiveInt(flags.timeout, '--timeout', 86_400);
  const retries = flags.retry === undefined ? undefined : parseRetry(flags.retry);
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    body: () => bodyOf(ctx, request),
    replayable: request.inputFrom !== '-',
    retries,
    timeoutMs: timeoutSeconds ? timeoutSeconds * 1000 : undefined,
  };
}

export function parseRetry(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 10) throw new UsageError(`--retry expects a whole number from 0 to 10 (got "${value}").`);
  return Number(value);
}

/** A fresh body per attempt: a file is reopened for a retry; stdin is never retried. */
export function bodyOf(ctx: Context, request: Pick<PreparedRequest, 'jsonBody' | 'inputFrom'>): string | Readable | undefined {
  if (request.jsonBody !== undefined) return request.jsonBody;
  if (request.inputFrom === undefined) return undefined;
  return request.inputFrom === '-' ? (ctx.io.stdin as Readable) : createReadStream(request.inputFrom);
}

/** --input and -F @file take regular files only: a FIFO or a device (/dev/zero) would hang or grow without end. */
export async function assertRegularFile(path: string, flag: string): Promise<void> {
  try {
    const info = await fs.stat(path);
    if (!info.isFile()) throw new UsageError(`${flag} ${path} is not a regular file.`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
}
