/**
 * The platform's scope catalogue as the spec documents it (platform-auth.md §5, "Scopes"). The server's metadata
 * (`scopes_supported`) is the source of truth for which scopes exist; this table only supplies what each one
 * grants, and stands in for the metadata when no server is known (completions, `plat scopes` offline).
 */
const SPEC_SCOPES: ReadonlyArray<readonly [name: string, grants: string]> = [
  ['openid', 'OpenID Connect authentication'],
  ['profile', 'basic profile information'],
  ['email', 'email address'],
  ['courses:read', 'read courses'],
  ['courses:write', 'write courses'],
  ['students:read', 'read students'],
  ['students:write', 'write students'],
  ['members:read', 'read members'],
  ['members:write', 'write members'],
  ['analytics:read', 'read analytics'],
  ['curriculum:read', 'read curriculum'],
  ['curriculum:write', 'write curriculum'],
  ['orders:read', 'read orders'],
  ['school:read', 'read school'],
  ['school:write', 'write school'],
  ['appearance:read', 'read appearance'],
  ['appearance:write', 'write appearance'],
  ['events:read', 'read events'],
  ['events:write', 'write events'],
  ['membership_plans:read', 'read membership plans'],
  ['membership_plans:write', 'write membership plans'],
  ['coupons:read', 'read coupons'],
  ['coupons:write', 'write coupons'],
  ['posts:read', 'read posts'],
  ['posts:write', 'write posts'],
  ['subscriptions:read', 'read subscriptions'],
  ['subscriptions:write', 'write subscriptions'],
  ['digital_products:read', 'read digital products'],
  ['digital_products:write', 'write digital products'],
  ['comments:read', 'read comments'],
  ['lecturers:read', 'read lecturers'],
  ['lecturers:write', 'write lecturers'],
  ['storage:write', 'write storage'],
  ['forms:read', 'read forms'],
  ['pages:read', 'read pages'],
  ['pages:write', 'write pages'],
  ['account:read', 'read account'],
  ['account:write', 'write account'],
];

const GRANTS = new Map<string, string>(SPEC_SCOPES);

/** What the spec says a scope grants, or undefined for a scope it does not document. */
export function describeScope(scope: string): string | undefined {
  return GRANTS.get(scope);
}

export const SPEC_SCOPE_NAMES: readonly string[] = SPEC_SCOPES.map(([name]) => name);
