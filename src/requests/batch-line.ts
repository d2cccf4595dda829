/**
 * One line of `plat batch` input, read and checked: `{id?, method, path, query?, headers?, body?}` is a raw request
 * (as plat call would send it), `{id?, op, params?, body?}` an operation of the platform's /openapi.json with its
 * parameters and body checked as plat op checks them (both built by request-object.ts, as client.batch() and plat
 * mcp build theirs). Every problem is a LineError naming what is wrong, so the command can list them with their line
 * numbers before anything is sent.
 */
import { findOperation, operationsFor, pathBelow, type ApiIndex, type FullApiIndex, type OperationDetail } from '../catalogue/openapi.js';
import type { ApiRequest } from '../session/index.js';
import { apiRequestOf } from './api-request.js';
import { buildRequest, problemPhrase, type RequestProblem } from './request-object.js';

export class LineError extends Error {}

export interface PreparedLine {
  id: string | number | undefined;
  request: ApiRequest;
  /** The line without its id, as JSON: what the journal's hash is of (an id added or spaces changed leave it alone). */
  canonical: string;
  /** A raw request line (its path is checked against the description), not an op line. */
  raw: boolean;
}

export interface LineContext {
  baseUrl: string | undefined;
  /** What to do when there is no platform to resolve a path against; plat batch's words by default. */
  noBaseUrl?: string;
  /** The API description, read on the first op line only. */
  index(): Promise<FullApiIndex>;
  /** Operations found by id, once per run. */
  operations?: Map<string, (OperationDetail & { operationId: string }) | undefined>;
}

/** undefined for a blank line (skipped, as NDJSON readers do). */
export async function prepareLine(text: string, context: LineContext): Promise<PreparedLine | undefined> {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LineError('not JSON');
  }
  return prepareObject(value, context);
}

/**
 * A line's object (or client.batch()'s request) as its request: a raw request, or an op of the description (read
 * on the first one) checked as plat op checks it. `say` puts a problem in the caller's words; by default a LineError.
 */
export async function prepareObject(value: unknown, context: LineContext, say: (problem: RequestProblem) => Error = linePhrase): Promise<PreparedLine> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw say({ kind: 'not-object' });
  const line = value as Record<string, unknown>;
  const id = line.id;
  if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') throw say({ kind: 'rule', message: '"id" must be a string or a number' });
  const isOp = 'op' in line;
  const prepared = await buildRequest(line, {
    baseUrl: context.baseUrl,
    noBaseUrl: context.noBaseUrl ?? 'log in first, or pass --base-url (or set PLAT_BASE_URL)',
    say,
    operation: async (operationId) => {
      const index = await context.index();
      context.operations ??= new Map();
      if (!context.operations.has(operationId)) context.operations.set(operationId, findOperation(index, operationId));
      return context.operations.get(operationId);
    },
  });
  const { id: _, ...rest } = line;
  return {
    id: id as string | number | undefined,
    request: apiRequestOf(prepared),
    canonical: JSON.stringify(rest),
    raw: !isOp,
  };
}

function linePhrase(problem: RequestProblem): LineError {
  return new LineError(problemPhrase(problem));
}

/** Answers kept per method and path: a bulk job repeats a few paths many times. */
const PATH_ANSWERS_KEPT = 10_000;

/**
 * A raw line's method and path against the platform's API description, as plat call warns about them: undefined
 * when the description lists them (or the URL is not the platform's), else what is wrong, in one phrase.
 */
export function pathProblem(index: ApiIndex, baseUrl: string, request: ApiRequest, answers: Map<string, string | undefined>): string | undefined {
  const method = request.method.toUpperCase();
  const asked = `${method} ${request.url.origin}${request.url.pathname}`;
  if (answers.has(asked)) return answers.get(asked);
  const base = new URL(baseUrl);
  let answer: string | undefined;
  const below = request.url.origin === base.origin ? pathBelow(base.pathname, request.url.pathname) : undefined;
  if (below !== undefined) {
    const path = below || '/';
    const onPath = operationsFor(index, path);
    if (onPath.length === 0) answer = `${method} ${path}: the path is not in the platform's API description (plat op lists the operations)`;
    else if (!onPath.some((o) => o.method === method) && !(method === 'HEAD' && onPath.some((o) => o.method === 'GET'))) {
      answer = `${method} ${path}: the platform's API description has no ${method} ${onPath[0]!.path} (it has ${onPath.map((o) => o.method).join(', ')})`;
    }
  }
  if (answers.size < PATH_ANSWERS_KEPT) answers.set(asked, answer);
  return answer;
}
