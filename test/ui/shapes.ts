/**
 * The documented `--json` shapes (README, "JSON output"), as checkable descriptions: every key, its type, nothing
 * extra. A shape that changes breaks scripts; these make such a change a failing test first.
 */
export type Shape =
  | 'string'
  | 'number'
  | 'boolean'
  | 'null'
  /** an ISO 8601 timestamp string */
  | 'iso'
  /** an absolute http(s) URL string */
  | 'url'
  | { oneOf: Shape[] }
  | { arrayOf: Shape }
  | { literal: Array<string | number | boolean> }
  | { object: Record<string, Shape>; optional?: string[]; open?: boolean };

export const oneOf = (...shapes: Shape[]): Shape => ({ oneOf: shapes });
export const arrayOf = (shape: Shape): Shape => ({ arrayOf: shape });
export const literal = (...values: Array<string | number | boolean>): Shape => ({ literal: values });
export const object = (keys: Record<string, Shape>, options: { optional?: string[]; open?: boolean } = {}): Shape => ({ object: keys, ...options });
export const nullable = (shape: Shape): Shape => oneOf(shape, 'null');

/** The mismatches between a value and a shape, each with its JSON path; [] when it fits. */
export function mismatches(value: unknown, shape: Shape, at = '$'): string[] {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (typeof shape === 'string') {
    switch (shape) {
      case 'iso':
        return typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value) && !Number.isNaN(Date.parse(value))
          ? []
          : [`${at}: expected an ISO timestamp, got ${JSON.stringify(value)}`];
      case 'url':
        return typeof value === 'string' && /^https?:\/\/\S+$/.test(value) ? [] : [`${at}: expected a URL, got ${JSON.stringify(value)}`];
      default:
        return kind === shape ? [] : [`${at}: expected ${shape}, got ${kind}`];
    }
  }
  if ('oneOf' in shape) {
    const results = shape.oneOf.map((s) => mismatches(value, s, at));
    return results.some((r) => r.length === 0) ? [] : [`${at}: fits none of the alternatives (${results.map((r) => r[0]).join('; ')})`];
  }
  if ('literal' in shape) {
    return shape.literal.includes(value as string) ? [] : [`${at}: expected one of ${JSON.stringify(shape.literal)}, got ${JSON.stringify(value)}`];
  }
  if ('arrayOf' in shape) {
    if (!Array.isArray(value)) return [`${at}: expected an array, got ${kind}`];
    return value.flatMap((item, i) => mismatches(item, shape.arrayOf, `${at}[${i}]`));
  }
  if (kind !== 'object') return [`${at}: expected an object, got ${kind}`];
  const record = value as Record<string, unknown>;
  const errors: string[] = [];
  for (const [key, keyShape] of Object.entries(shape.object)) {
    if (!(key in record)) {
      if (!shape.optional?.includes(key)) errors.push(`${at}.${key}: missing`);
      continue;
    }
    errors.push(...mismatches(record[key], keyShape, `${at}.${key}`));
  }
  if (!shape.open) for (const key of Object.keys(record)) if (!(key in shape.object)) errors.push(`${at}.${key}: not part of the documented shape`);
  return errors;
}

const user = object({ sub: 'string', name: 'string', email: 'string', preferred_username: 'string' }, { optional: ['name', 'email', 'preferred_username'] });
const tokenStore = literal('keychain', 'file');

/** `plat login --json` */
export const LOGIN = object({
  profile: 'string',
  baseUrl: 'url',
  issuer: 'url',
  user: nullable(user),
  scopes: arrayOf('string'),
  expiresAt: nullable('iso'),
  clientId: 'string',
  tokenStore,
});

/** `plat whoami --json`: the server's UserInfo as is — `sub` at least, whatever else it sends. */
export const WHOAMI = object({ sub: 'string' }, { open: true });

/** `plat status --json` */
export const STATUS = object({
  profiles: arrayOf(
    object(
      {
        profile: 'string',
        current: 'boolean',
        loggedIn: 'boolean',
        baseUrl: nullable('url'),
        issuer: nullable('url'),
        user: nullable(user),
        scopes: arrayOf('string'),
        expiresAt: nullable('iso'),
        clientId: nullable('string'),
        tokenStore: nullable(tokenStore),
        tokenStoreLocation: nullable('string'),
        works: 'boolean',
        checkedAt: 'iso',
        refreshedForCheck: 'boolean',
        problem: 'string',
      },
      { optional: ['works', 'checkedAt', 'refreshedForCheck', 'problem'] },
    ),
  ),
  token: nullable('string'),
});

/** `plat refresh --json` */
export const REFRESH = object({ profile: 'string', expiresAt: nullable('iso'), scopes: arrayOf('string') });

/** `plat logout --json` (with --all: an array of these) */
export const LOGOUT = object({ profile: 'string', wasLoggedIn: 'boolean', revoked: 'boolean', revocationErrors: arrayOf('string'), forgotten: 'boolean' });

/** `plat switch --json` */
export const SWITCH = object({ profile: 'string', previous: 'string', baseUrl: nullable('url'), loggedIn: 'boolean' });

/** `plat scopes --json` */
export const SCOPES = object({
  baseUrl: nullable('url'),
  source: literal('server', 'spec'),
  profile: 'string',
  loggedIn: 'boolean',
  scopes: arrayOf(object({ name: 'string', description: nullable('string'), granted: 'boolean' })),
});

/** `plat scopes plan <operationId>… --json` */
export const SCOPE_PLAN = object({
  baseUrl: 'url',
  profile: 'string',
  loggedIn: 'boolean',
  scopes: arrayOf(object({ name: 'string', held: 'boolean' })),
  missing: arrayOf('string'),
  operations: arrayOf(object({ operationId: 'string', method: 'string', path: 'string', satisfiedBy: arrayOf('string') })),
  unstated: arrayOf('string'),
});

/** `plat op --json` */
export const API = object({
  baseUrl: 'url',
  source: 'url',
  title: nullable('string'),
  version: nullable('string'),
  fetchedAt: 'iso',
  operations: arrayOf(
    object({
      method: literal('GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'),
      path: 'string',
      summary: nullable('string'),
      operationId: nullable('string'),
      scopes: nullable(arrayOf('string')),
      anonymous: nullable('boolean'),
      security: nullable(arrayOf(arrayOf('string'))),
    }),
  ),
});

const strings = nullable(arrayOf('string'));
/** `plat discover --json` */
export const DISCOVER = object({
  baseUrl: 'url',
  issuer: 'url',
  resource: nullable('url'),
  authorizationServers: arrayOf('url'),
  endpoints: object({
    authorization: nullable('url'),
    token: nullable('url'),
    registration: nullable('url'),
    userinfo: nullable('url'),
    revocation: nullable('url'),
    deviceAuthorization: nullable('url'),
    introspection: nullable('url'),
    jwks: nullable('url'),
  }),
  grantTypes: strings,
  responseTypes: strings,
  pkceMethods: strings,
  tokenEndpointAuthMethods: strings,
  scopes: strings,
  issParameterSupported: 'boolean',
  clientIdMetadataDocumentSupported: nullable('boolean'),
  filledFromSpec: arrayOf('string'),
  fetchedAt: 'iso',
  metadata: object({ authorizationServer: object({ issuer: 'url' }, { open: true }), protectedResource: nullable(object({}, { open: true })) }),
});
