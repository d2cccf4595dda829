// The scope catalogue of the platform's published auth surface (spec section 5, "Scopes").

/** @type {ReadonlyArray<readonly [string, string]>} */
export const SCOPE_TABLE = [
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

export const ALL_SCOPES = SCOPE_TABLE.map(([name]) => name);

/** Scopes that name an area of the business API (everything but the OpenID Connect ones). */
export const API_SCOPES = ALL_SCOPES.filter((s) => !['openid', 'profile', 'email'].includes(s));

const DESCRIPTIONS = new Map(SCOPE_TABLE);

/** @param {string} scope */
export function describeScope(scope) {
  return DESCRIPTIONS.get(scope) ?? 'unrecognised scope';
}
