/**
 * The documented `--json` shapes are JSON Schemas in src/schemas/ (shipped in dist/schemas/ for script authors, `plat
 * help scripting`), checked here with ajv: every key, its type, nothing extra. A shape that changes breaks scripts;
 * the schemas make such a change a failing test first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

export const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/schemas');

/** The schema files by name (`login`, `scopes-plan`, …). */
export const SCHEMA_NAMES = readdirSync(SCHEMA_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length))
  .sort();

export function readSchema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(SCHEMA_DIR, `${name}.json`), 'utf8')) as Record<string, unknown>;
}

/**
 * ajv in strict mode (an unknown keyword or a loose schema is an error), with the two formats the schemas use checked
 * as plat writes them: timestamps in UTC (`Z`) that parse, and absolute http(s) URLs.
 */
function makeAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value) && !Number.isNaN(Date.parse(value)));
  ajv.addFormat('uri', (value: string) => /^https?:\/\/\S+$/.test(value) && URL.canParse(value));
  return ajv;
}

const ajv = makeAjv();
const validators = new Map<string, ValidateFunction>();

function validator(name: string): ValidateFunction {
  let validate = validators.get(name);
  if (!validate) {
    validate = ajv.compile(readSchema(name));
    validators.set(name, validate);
  }
  return validate;
}

function describe(error: ErrorObject): string {
  const at = `$${error.instancePath.replace(/\//g, '.')}`;
  if (error.keyword === 'additionalProperties') return `${at}.${String(error.params.additionalProperty)}: not part of the documented shape`;
  if (error.keyword === 'required') return `${at}.${String(error.params.missingProperty)}: missing`;
  return `${at}: ${error.message ?? error.keyword}`;
}

/** The mismatches between a value and the named schema, each with its JSON path; [] when it fits. */
export function schemaErrors(value: unknown, name: string): string[] {
  const validate = validator(name);
  return validate(value) ? [] : [...new Set((validate.errors ?? []).map(describe))];
}
