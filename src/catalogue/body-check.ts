/**
 * A request body checked against the operation's JSON Schema before it is sent. The validator is ajv (JSON Schema
 * draft 2020-12, the dialect of OpenAPI 3.1; older documents' schemas are a subset of it), loaded only here: it is
 * the heaviest thing `plat op` touches and nothing else needs it.
 */
import { importPackage } from '../esm.js';

type Json = Record<string, unknown>;

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** At most this many problems are named; the rest are counted. */
const SHOWN = 5;

/**
 * A schema larger than this is not checked here (the server still judges the body). ajv compiles a schema to code
 * in one synchronous run whose time grows faster than the schema: measured 0.6 s at 5,000 nodes, 2.2 s at 10,000,
 * 20 s at 30,000 (a description's body of 6,000 properties with patterns) — long enough, on the main thread, to
 * hold Ctrl-C. Real request bodies are far smaller.
 */
const MAX_CHECKED_SCHEMA_NODES = 5_000;

/**
 * The problems with `body` under `schema`, one short phrase each (`-F seats: must be integer`), [] when it is
 * valid. A schema ajv cannot compile is not the person's fault: it is skipped (the server still judges the body).
 */
export async function bodyProblems(schema: Json, body: unknown): Promise<string[]> {
  const validate = await validatorFor(schema);
  if (!validate || validate(body)) return [];
  const errors = (validate.errors ?? []) as AjvError[];
  const phrases = [...new Set(errors.filter((e) => e.keyword !== 'if').map(describe))];
  if (phrases.length > SHOWN) return [...phrases.slice(0, SHOWN), `and ${phrases.length - SHOWN} more`];
  return phrases;
}

type Validator = ReturnType<AjvInstance['compile']>;

/**
 * One compiled validator per schema object, for as long as the schema lives: plat batch checks thousands of lines
 * of one operation (twice each: the check pass, then the send), and compiling costs ~20 ms where validating costs
 * microseconds (2,000 op lines: 42 s of CPU to --check before, under a second with this). null: not checked.
 */
const validators = new WeakMap<object, Promise<Validator | null>>();
let makeAjv: Promise<() => AjvInstance> | undefined;

function validatorFor(schema: Json): Promise<Validator | null> {
  let validator = validators.get(schema);
  if (!validator) {
    validator = compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

async function compile(schema: Json): Promise<Validator | null> {
  if (nodesExceed(schema, MAX_CHECKED_SCHEMA_NODES)) return null;
  makeAjv ??= (async () => {
    const { default: Ajv2020 } = await importPackage<{ default: new (options: object) => AjvInstance }>('ajv/dist/2020.js');
    // The schema's patterns run on RE2 (pattern.ts): ajv's default, V8's RegExp, backtracks on a hostile one.
    const { ajvRegExp, loadPatternEngine } = await import('./pattern.js');
    const regExp = ajvRegExp(await loadPatternEngine());
    // A fresh ajv per schema: one shared instance would keep every schema it compiled, under ids a description chose.
    return () => new Ajv2020({ strict: false, allErrors: true, validateFormats: false, allowUnionTypes: true, code: { regExp } });
  })();
  const ajv = (await makeAjv)();
  try {
    return ajv.compile(forDraft2020(schema));
  } catch {
    return null;
  }
}

interface AjvInstance {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown[] | null };
}

/** `-F seats: must be integer`; a top-level field is named as the -f/-F key that sets it. */
function describe(error: AjvError): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  let message = error.message ?? 'is not valid';
  if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues)) message = `must be one of: ${error.params.allowedValues.map(String).join(', ')}`;
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    const missing = error.params.missingProperty;
    return path.length === 0 ? `the field ${missing} is required (-f ${missing}=…)` : `${path.join('.')}.${missing} is required`;
  }
  if (error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string') {
    const extra = error.params.additionalProperty;
    return path.length === 0 ? `there is no field ${extra}` : `${path.join('.')} has no field ${extra}`;
  }
  if (path.length === 0) return `the body ${message}`;
  return `${path.join('.')}: ${message}`;
}

/** Whether `node` holds more than `max` values (objects, arrays and leaves), counted without recursion. */
function nodesExceed(node: unknown, max: number): boolean {
  const stack: unknown[] = [node];
  let count = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (++count > max) return true;
    // One push at a time: spreading an enum of a million values would exceed the arguments a call can take.
    if (typeof value === 'object' && value !== null) for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push(child);
  }
  return false;
}

/** OpenAPI 3.0's `nullable: true` is draft 2020-12's `type: [T, "null"]`. */
function forDraft2020(schema: unknown): object {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) out[key] = walk(value);
    if (out.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
    return out;
  };
  const walked = walk(schema);
  if (typeof walked !== 'object' || walked === null) return {};
  // The document's dialect is OpenAPI's; a stray $schema naming another draft would only make ajv refuse it.
  delete (walked as Json).$schema;
  return walked;
}
