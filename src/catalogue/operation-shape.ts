/**
 * What `plat op` needs of one operation beyond the listing: its parameters (path, query, header; schema, required,
 * default), its JSON request body's schema, and its security requirements as alternatives of scope sets. Read once
 * from the document when it is cached, with local `$ref`s resolved, so a call reads one small file.
 */
import { refusedHeader } from '../http/header-rule.js';
import { sanitize } from '../terminal/text.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

type ParamLocation = 'path' | 'query' | 'header';

export interface ParamSpec {
  name: string;
  in: ParamLocation;
  required: boolean;
  description: string | null;
  /** The parameter's JSON Schema (local references resolved); {} when the document gives none. */
  schema: Json;
}

/** A header parameter plat never offers (http/header-rule.ts): its name as the document gives it, and why. */
export interface RefusedParam {
  name: string;
  reason: string;
}

export interface BodySpec {
  required: boolean;
  /** The media type plat sends (a JSON one when the document lists one). */
  contentType: string;
  /** The JSON Schema of that media type, references resolved; null when the document gives none. */
  schema: Json | null;
}

/** RFC 6749 §3.3 scope-token, bounded: anything else in a document is not a scope plat will print. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/;
/** A parameter name plat can take as `--name`: what a shell passes through unquoted and commander reads as one flag. */
const FLAG_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.\-[\]]{0,99}$/;

/** Resolving stops this deep (a cycle or a monster document): what is below accepts anything. */
const MAX_DEPTH = 24;
/** One schema that big is hostile: stop copying and accept anything below. */
const MAX_NODES = 20_000;
/**
 * What the whole description may expand to, all operations together: references that multiply (each schema naming
 * the next one twice) made a 1.5 MB document 2.7 GB in memory and a 322 MB cache file when only each reference had a
 * budget. The reference platform's document uses about 1 % of it; GitHub's REST description (11 MB) fits as well.
 */
const MAX_DOCUMENT_NODES = 500_000;

/** The nodes left to copy for one description: shared by every resolveRefs for it. */
export interface ExpansionBudget {
  left: number;
}

export const newExpansionBudget = (): ExpansionBudget => ({ left: MAX_DOCUMENT_NODES });

/**
 * A copy of `node` with every local `$ref` (`#/components/...`) replaced by what it points to; a cycle, a remote
 * reference or a reference to nothing becomes `{}` (accept anything): the server still checks what plat lets by.
 * Once the description's budget is spent, whatever is left accepts anything too.
 */
function resolveRefs(node: unknown, doc: Json, document: ExpansionBudget = newExpansionBudget()): unknown {
  let budget = MAX_NODES;
  const walk = (value: unknown, depth: number, seen: readonly string[]): unknown => {
    if (--budget < 0 || --document.left < 0 || depth > MAX_DEPTH) return {};
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, seen));
    if (!isObject(value)) return value;
    if (typeof value.$ref === 'string') {
      const ref = value.$ref;
      if (seen.includes(ref)) return {};
      const target = pointer(doc, ref);
      return target === undefined ? {} : walk(target, depth + 1, [...seen, ref]);
    }
    const out: Json = {};
    for (const [key, v] of Object.entries(value)) out[key] = walk(v, depth + 1, seen);
    return out;
  };
  return walk(node, 0, []);
}

/** RFC 6901 JSON pointer inside the document (`#/components/schemas/Course`). */
function pointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    if (!Object.hasOwn(node as object, key)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/**
 * Path-item parameters, overridden by the operation's own of the same name and location (OpenAPI §4.8.10). A
 * header parameter the header rule refuses (Host, Authorization, Content-Length, …) is set aside with its reason:
 * no option, tool argument or batch param ever fills it, and `plat op --help` and the tool say why.
 */
export function parametersOf(item: Json, op: Json, doc: Json, budget?: ExpansionBudget): { parameters: ParamSpec[]; refusedHeaders: RefusedParam[] } {
  const byKey = new Map<string, ParamSpec>();
  const refused = new Map<string, RefusedParam>();
  for (const list of [item.parameters, op.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const p = resolveRefs(raw, doc, budget);
      if (!isObject(p) || typeof p.name !== 'string' || !FLAG_NAME.test(p.name)) continue;
      if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue; // cookies: plat sends none
      // An operation is always on the platform: toward it, its credential headers are the session's alone.
      const reason = p.in === 'header' ? refusedHeader(p.name, true) : undefined;
      if (reason) {
        refused.set(p.name.toLowerCase(), { name: p.name, reason });
        continue;
      }
      const schema = isObject(p.schema) ? p.schema : isObject(p.content) ? firstSchema(p.content) ?? {} : {};
      byKey.set(`${p.in}:${p.name}`, {
        name: p.name,
        in: p.in,
        required: p.in === 'path' || p.required === true,
        description: typeof p.description === 'string' ? sanitize(p.description, 300) || null : null,
        schema: schema as Json,
      });
    }
  }
  return { parameters: [...byKey.values()], refusedHeaders: [...refused.values()] };
}

function firstSchema(content: Json): Json | undefined {
  for (const media of Object.values(content)) if (isObject(media) && isObject(media.schema)) return media.schema;
  return undefined;
}

/** The request body: the JSON media type if there is one, else the first listed. */
export function bodyOf(op: Json, doc: Json, budget?: ExpansionBudget): BodySpec | null {
  const body = resolveRefs(op.requestBody, doc, budget);
  if (!isObject(body) || !isObject(body.content)) return null;
  const types = Object.keys(body.content);
  const contentType = types.find((t) => /^application\/([\w.+-]*\+)?json\b/i.test(t)) ?? types[0];
  if (!contentType) return null;
  const media = body.content[contentType];
  const schema = isObject(media) && (isObject(media.schema) || typeof media.schema === 'boolean') ? media.schema : null;
  return { required: body.required === true, contentType, schema: schema === true ? {} : schema === false ? { not: {} } : (schema as Json | null) };
}

/**
 * The operation's security requirements as alternatives, each the scopes a token needs (`[]`: no token, or a token
 * with no particular scope). Alternatives that need a scheme plat cannot satisfy (an API key, HTTP basic) are left
 * out; null when the document says nothing.
 */
export function securityAlternatives(requirements: unknown, schemes: Json | undefined): string[][] | null {
  if (!Array.isArray(requirements)) return null;
  // `security: []` lists no requirement at all: the operation is public (OpenAPI 3 §4.8.10), the same as one
  // alternative that needs nothing. It is not "every alternative needs another credential".
  if (requirements.length === 0) return [[]];
  const alternatives: string[][] = [];
  for (const requirement of requirements) {
    if (!isObject(requirement)) continue;
    const scopes = new Set<string>();
    let usable = true;
    for (const [scheme, list] of Object.entries(requirement)) {
      const type = schemes && isObject(schemes[scheme]) ? schemes[scheme].type : undefined;
      if (schemes && type !== 'oauth2' && type !== 'openIdConnect') {
        usable = false;
        break;
      }
      if (Array.isArray(list)) for (const s of list) if (typeof s === 'string' && SCOPE_TOKEN.test(s)) scopes.add(s);
    }
    if (usable) alternatives.push([...scopes].sort());
  }
  return alternatives;
}
