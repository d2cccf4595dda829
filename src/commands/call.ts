/**
 * `plat call`: an authenticated request whose body streams to stdout unmodified (pretty JSON only on a TTY).
 * The token goes only to the API's origin; redirects are not followed (so it never follows one elsewhere);
 * idempotent requests are retried on resets, 429 and 503; a 401 triggers one refresh and one retry.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Context } from '../context.js';
import type { HttpResponse } from '../http.js';
import type { Profile } from '../store/types.js';
import { AuthError, ExitCode, InterruptedError, NetworkError, PlatError, ScopeError, UsageError } from '../errors.js';
import { parseBearerChallenge } from '../oauth/www-authenticate.js';
import { getAccessToken, type TokenSource } from '../session/access.js';
import { loadProfile, resolveBaseUrl } from '../session/profile.js';
import { parsePositiveInt } from './options.js';
import { prepareRequest, type PreparedRequest } from './call-request.js';

export interface CallFlags {
  header?: string[];
  field?: string[];
  typedField?: string[];
  input?: string;
  include?: boolean;
  anonymous?: boolean;
  timeout?: string;
}

const RETRYABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const MAX_RETRIES = 3;
/** Failures where the request most likely never reached the application: safe to repeat an idempotent one. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const PRETTY_LIMIT = 8 * 1024 * 1024;

export async function run(ctx: Context, method: string, target: string, flags: CallFlags): Promise<void> {
  const profile = await loadProfile(ctx);
  const baseUrl = resolveBaseUrl(ctx, profile);
  const request = await prepareRequest(
    { method, target, headers: flags.header ?? [], fields: flags.field ?? [], typedFields: flags.typedField ?? [], input: flags.input },
    baseUrl,
    () => readAll(ctx.io.stdin),
  );
  await runPrepared(ctx, request, flags, { profile, baseUrl });
}

/** The rest of `plat call` once the request is built; `plat op` builds its request from the document and ends here. */
export async function runPrepared(
  ctx: Context,
  request: PreparedRequest,
  flags: CallFlags,
  { profile, baseUrl }: { profile: Profile; baseUrl: string | undefined },
): Promise<void> {
  const { io } = ctx;
  const timeoutMs = (parsePositiveInt(flags.timeout, '--timeout', 86_400) ?? 0) * 1000 || undefined;
  if (request.inputFrom && request.inputFrom !== '-') await assertReadable(request.inputFrom);
  // The cached /openapi.json (from `plat api`), if any: warn about unknown paths and scopes the session lacks.
  if (request.sameOrigin) {
    const { checkCall } = await import('../catalogue/call-check.js');
    await checkCall(ctx, { ...request, baseUrl, profile: flags.anonymous ? undefined : profile });
  }

  let source: TokenSource | undefined;
  if (!flags.anonymous && request.sameOrigin) {
    source = await getAccessToken(ctx, { optional: true, profile });
    if (!source) io.note('Not logged in: calling anonymously. Run plat login to call as yourself.');
  } else if (!flags.anonymous && !request.sameOrigin) {
    io.note(`${request.url.origin} is not the platform's origin: calling it without your token.`);
  }

  const replayable = request.inputFrom !== '-';
  let response = await send(ctx, request, source?.token, timeoutMs, replayable);
  if (response.status === 401 && source?.kind === 'session' && replayable) {
    const challenge = parseBearerChallenge(header(response, 'www-authenticate'));
    if (!challenge?.error || challenge.error === 'invalid_token') {
      response.body.destroy();
      source = await getAccessToken(ctx, { force: true });
      response = await send(ctx, request, source.token, timeoutMs, replayable);
    }
  }
  await render(ctx, request, response, Boolean(flags.include));
  const outcome = classify(request, response, source);
  if (outcome) throw outcome;
}

async function send(
  ctx: Context,
  request: PreparedRequest,
  token: string | undefined,
  timeoutMs: number | undefined,
  replayable: boolean,
): Promise<HttpResponse> {
  const http = await ctx.http();
  const retryable = replayable && RETRYABLE_METHODS.has(request.method);
  for (let attempt = 0; ; attempt++) {
    const headers = { ...request.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    try {
      // Redirects are never followed: the response (3xx included) is the result.
      const response = await http.request({
        method: request.method,
        url: request.url,
        headers,
        body: bodyOf(ctx, request),
        signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
      });
      if (retryable && attempt < MAX_RETRIES && (response.status === 429 || response.status === 503)) {
        const wait = retryDelay(header(response, 'retry-after') ?? null, attempt);
        if (wait !== undefined) {
          response.body.destroy();
          if (ctx.globals.verbose) ctx.io.note(`HTTP ${response.status}; retrying in ${Math.round(wait / 100) / 10} s`);
          await sleep(wait, ctx.signal);
          continue;
        }
      }
      return response;
    } catch (error) {
      const reset = error instanceof NetworkError && RESET_CODES.has(error.code ?? '');
      if (retryable && reset && attempt < MAX_RETRIES) {
        await sleep(backoff(attempt), ctx.signal);
        continue;
      }
      throw error;
    }
  }
}

function header(response: HttpResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A fresh body per attempt: a file is reopened for a retry; stdin is never retried. */
function bodyOf(ctx: Context, request: PreparedRequest): string | Readable | undefined {
  if (request.jsonBody !== undefined) return request.jsonBody;
  if (request.inputFrom === undefined) return undefined;
  return request.inputFrom === '-' ? (ctx.io.stdin as Readable) : createReadStream(request.inputFrom);
}

/** Retry-After in seconds or as a date, capped at 30 s; undefined when the server asks for longer. */
function retryDelay(header: string | null, attempt: number): number | undefined {
  if (!header) return backoff(attempt);
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(seconds)) return backoff(attempt);
  return seconds > 30_000 ? undefined : Math.max(0, seconds);
}

const backoff = (attempt: number) => 250 * 2 ** attempt + Math.floor(Math.random() * 100);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

async function render(ctx: Context, request: PreparedRequest, response: HttpResponse, include: boolean): Promise<void> {
  const { io } = ctx;
  if (include) {
    let head = `HTTP/1.1 ${response.status} ${response.statusText}\n`;
    for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) head += `${response.rawHeaders[i]!.toLowerCase()}: ${response.rawHeaders[i + 1]}\n`;
    io.out(`${head}\n`);
  }
  if (request.method === 'HEAD') {
    response.body.resume();
    return;
  }
  const type = header(response, 'content-type') ?? '';
  const length = Number(header(response, 'content-length') ?? NaN);
  try {
    if (io.stdoutIsTTY && /\bjson\b/.test(type) && !(length > PRETTY_LIMIT)) {
      const text = await readAll(response.body);
      try {
        io.out(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
      } catch {
        io.out(text);
      }
      return;
    }
    // Straight through with backpressure: memory stays flat whatever the size.
    await pipeline(response.body, io.stdout, { end: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return; // `plat call … | head` is fine
    if (error instanceof PlatError) throw error;
    // Ctrl-C and --timeout end the body on purpose: say which, rather than that the server broke off.
    if (ctx.signal.aborted) throw new InterruptedError();
    if ((error as Error)?.name === 'TimeoutError') {
      throw new NetworkError(`The request to ${request.url.origin} timed out while the response arrived. Raise --timeout if it needs longer.`, { cause: error });
    }
    throw new NetworkError(`The response from ${request.url.origin} broke off before it was complete. Try again.`, { cause: error });
  }
}

function classify(request: PreparedRequest, response: HttpResponse, source: TokenSource | undefined): PlatError | undefined {
  const status = response.status;
  if (status < 400) return undefined;
  const where = `${request.method} ${request.url.pathname}`;
  const challenge = parseBearerChallenge(header(response, 'www-authenticate'));
  if (status === 403 && challenge?.error === 'insufficient_scope') {
    const scope = challenge.scope;
    // The printed command must step up the session that was used, so a non-default profile is named in it.
    const profile = source?.kind === 'session' && source.profile.name !== 'default' ? ` --profile ${source.profile.name}` : '';
    return new ScopeError(
      scope
        ? `${where} needs the scope "${scope}", which this session does not have. Run: plat login${profile} --add-scope ${scope.trim().split(/\s+/).join(',')}`
        : `${where} needs a scope this session does not have. Run plat login${profile} --add-scope <scope> (see plat scopes).`,
    );
  }
  if (status === 401) {
    if (!source) return new AuthError(`${where} needs you to be signed in (HTTP 401). Run plat login.`);
    if (source.kind === 'env') return new AuthError(`The server rejected PLAT_TOKEN (HTTP 401) for ${where}. Provide a valid token.`);
    return new AuthError(`The server rejected the token even after a refresh (HTTP 401) for ${where}. Run plat login.`);
  }
  return new PlatError(`HTTP ${status} ${response.statusText}: ${where}`, ExitCode.failure);
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function assertReadable(path: string): Promise<void> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new UsageError(`--input ${path} is not a file.`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Cannot read --input ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
}
