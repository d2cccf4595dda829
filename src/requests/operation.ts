/**
 * `plat op`'s request, built from the operation the document describes: path parameters into the template, query
 * and header parameters by name, -f/-F fields or --input as the body — every parameter checked against its schema
 * and the body against the request schema before anything is sent (a UsageError, exit 2, otherwise). The result is
 * the same PreparedRequest `plat call` builds, so the rest of the way is `plat call`'s.
 */
import { promises as fs } from 'node:fs';
import type { OperationDetail } from '../catalogue/openapi.js';
import type { ParamSpec } from '../catalogue/operation-shape.js';
import { checkParam, expectation, hasPattern, ParamValueError } from '../catalogue/param-check.js';
import { UsageError } from '../errors.js';
import { prepareRequest, type PreparedRequest } from './prepare.js';

/** A parameter given on the command line (commands/op/command.ts) or by an MCP tool's arguments (mcp/call.ts). */
export interface GivenParam {
  param: ParamSpec;
  /** How the person named it, for messages: `--limit` or `-p limit`. */
  flag: string;
  values: string[];
}

export interface OpBodyArgs {
  headers: string[];
  fields: string[];
  typedFields: string[];
  input?: string;
}

export async function prepareOpRequest(
  op: OperationDetail & { operationId: string },
  given: GivenParam[],
  body: OpBodyArgs,
  baseUrl: string | undefined,
  readStdinText: () => Promise<string>,
): Promise<PreparedRequest> {
  const id = op.operationId;
  const missing = op.parameters.filter((p) => p.required && !given.some((g) => g.param === p));
  if (missing.length > 0) {
    const list = missing.map((p) => `--${p.name} (${expectation(p.schema)})`).join(', ');
    throw new UsageError(`${id} needs ${list}. Run plat op ${id} --help for what each means.`);
  }
  let path = op.path;
  const query = new URLSearchParams();
  const headers = [...body.headers];
  const patterns = given.some((g) => hasPattern(g.param)) ? await (await import('../catalogue/pattern.js')).loadPatternEngine() : undefined;
  for (const { param, flag, values } of given) {
    let checked: string[];
    try {
      checked = checkParam(param, values, flag, patterns);
    } catch (error) {
      if (error instanceof ParamValueError) throw new UsageError(error.message);
      throw error;
    }
    if (param.in === 'path') {
      // encodeURIComponent leaves "." and "..", which would climb out of the operation's path to another one.
      if (checked[0] === '.' || checked[0] === '..') throw new UsageError(`${flag} cannot be "${checked[0]}": it would change the path rather than fill it.`);
      path = path.split(`{${param.name}}`).join(encodeURIComponent(checked[0]!));
    }
    else if (param.in === 'query') for (const v of checked) query.append(param.name, v);
    else headers.push(`${param.name}: ${checked.join(', ')}`);
  }

  const hasFields = body.fields.length > 0 || body.typedFields.length > 0;
  if (!op.body && (hasFields || body.input !== undefined)) {
    const params = op.parameters.map((p) => `--${p.name}`).join(', ');
    throw new UsageError(`${id} takes no request body, so -f, -F and --input mean nothing to it.${params ? ` Its parameters: ${params}.` : ''}`);
  }
  if (op.body?.required && !hasFields && body.input === undefined) {
    throw new UsageError(`${id} needs a request body: give its fields with -f/-F, or the whole body with --input <file>.`);
  }
  if (op.body && !headers.some((h) => /^\s*content-type\s*:/i.test(h))) headers.push(`Content-Type: ${op.body.contentType}`);

  const target = query.size > 0 ? `${path}?${query}` : path;
  const request = await prepareRequest(
    { method: op.method, target, headers, fields: body.fields, typedFields: body.typedFields, input: body.input },
    baseUrl,
    readStdinText,
  );
  if (!op.body || !/\bjson\b/i.test(op.body.contentType)) return request;

  // The body as it will be sent, read once so it can be checked (a JSON body is small; stdin cannot be read twice).
  let text = request.jsonBody;
  if (text === undefined && request.inputFrom !== undefined) {
    const from = request.inputFrom;
    try {
      text = from === '-' ? await readStdinText() : await fs.readFile(from, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read --input ${from}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
    request.jsonBody = text;
    request.inputFrom = undefined;
  }
  if (text === undefined) return request;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`The request body for ${id} is not JSON (--input ${body.input}); the operation takes ${op.body.contentType}.`);
  }
  if (op.body.schema) {
    const { bodyProblems } = await import('../catalogue/body-check.js');
    const problems = await bodyProblems(op.body.schema, value);
    if (problems.length > 0) {
      throw new UsageError(`The request body does not match what ${id} takes: ${problems.join('; ')}. Run plat op ${id} --help for its fields.`);
    }
  }
  return request;
}
