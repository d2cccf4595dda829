import type { JsonWebKey } from 'node:crypto';

/**
 * What plat keeps about a signed-in user, split by sensitivity:
 * - `StoredSession` holds secrets (tokens, a confidential client's secret) plus the facts that must change together
 *   with them (expiry, granted scopes). It is written as one unit to a TokenStore, so a reader never sees the access
 *   token of one refresh with the expiry of another.
 * - `Profile` holds non-secret state in the config dir: where the platform is, which client we registered, who the
 *   user is, and copies of scopes/expiry for `plat status`.
 */
export interface StoredSession {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  tokenType: string;
  /** Absolute expiry of the access token, epoch milliseconds; absent when the server did not say. */
  expiresAt?: number;
  /** When the access token was obtained, epoch milliseconds (with expiresAt, gives the lifetime). */
  obtainedAt: number;
  scopes: string[];
  /** The server's expires_in was past what plat keeps, so expiresAt is capped (a note says so at login and refresh). */
  lifetimeCapped?: true;
  /** Secret of a pre-registered confidential client, kept beside the tokens, never in the config file. */
  clientSecret?: string;
  /**
   * The private key a DPoP-bound session (tokenType `DPoP`, RFC 9449) signs its proofs with: kept here only, beside
   * the refresh token, made anew at each login. A bound session without a usable key is ended, never used as bearer.
   */
  dpopKey?: { alg: string; jwk: JsonWebKey };
}

export interface ClientRegistration {
  clientId: string;
  /**
   * `none` for public clients, `client_secret_post` for confidential integrations (which send their secret as the
   * server's metadata prefers: in the form, or with HTTP Basic where only client_secret_basic is listed).
   */
  authMethod: 'none' | 'client_secret_post';
  /** The secret method the server assigned to a client plat registered (RFC 7591 §3.2.1); absent: as the metadata prefers. */
  secretMethod?: 'client_secret_post' | 'client_secret_basic';
  /** When the server said that registered secret expires, epoch ms; absent: never. */
  secretExpiresAt?: number;
  /** The issuer this client is registered at: a registration is reused only at the same issuer. */
  issuer: string;
  redirectUris: string[];
  /** The scopes plat registered it for (RFC 7591 `scope`); absent for older registrations and pre-registered clients. */
  scopes?: string[];
  /** The grant types plat registered it for (RFC 7591 `grant_types`); absent for older registrations and pre-registered clients. */
  grantTypes?: string[];
  /** true when plat registered it itself (RFC 7591), false for a pre-registered integration. */
  dynamic: boolean;
  registeredAt: number;
}

export interface ProfileUser {
  sub: string;
  name?: string;
  email?: string;
  preferredUsername?: string;
}

export interface Profile {
  name: string;
  baseUrl?: string;
  issuer?: string;
  /** The RFC 8707 resource the session's tokens are bound to (sent on login and refresh). */
  resource?: string;
  /** true when plat chose `resource` itself (the API's protected-resource metadata names it), not --resource. */
  resourceByDefault?: boolean;
  /** The issuer that refused the default resource with invalid_target: plat no longer sends it there. */
  resourceRefusedBy?: string;
  /** How the session was signed in: `device` for the device flow (a step-up asks the same way); absent: the browser. */
  loginMethod?: 'device';
  client?: ClientRegistration;
  user?: ProfileUser;
  scopes?: string[];
  expiresAt?: number;
  /** The RFC 7638 thumbprint of the key a DPoP-bound session's tokens are bound to (the private key is in the token store). */
  dpopJkt?: string;
  /** Where this profile's session lives: decided at login, honoured by later commands. */
  tokenStore?: TokenStoreKind;
  /** true while a session is stored (the tokens themselves are in the token store). */
  loggedIn?: boolean;
  /**
   * Set when the session ended without the user's word (the server rejected the refresh token or the client):
   * until plat login or plat logout, commands fail with exit 4 instead of quietly calling anonymously.
   */
  sessionEnded?: { at: number; reason: string };
  updatedAt?: number;
}

export type TokenStoreKind = 'keychain' | 'file';

export interface TokenStore {
  readonly kind: TokenStoreKind;
  /** A human description of where the secrets are, for `plat status` ("OS keychain (Secret Service)", a path). */
  readonly location: string;
  get(profile: string): Promise<StoredSession | undefined>;
  /** Replaces the whole session for the profile atomically. */
  set(profile: string, session: StoredSession): Promise<void>;
  /** Removes it; deleting what is not there is not an error. */
  delete(profile: string): Promise<void>;
  /**
   * Throws if a session could not be written now. Asked when `get` found nothing where a session should be (a
   * locked keychain reads as empty, so "nothing" is only believed from a store that works), and before a login
   * that must store in this store asks anyone to approve.
   */
  assertWritable?(profile: string): Promise<void>;
  /**
   * Lets go of what the store keeps open between operations (a one-shot process's keychain bus connections):
   * closed, or with `exiting` left to end with the process. The store stays usable; it opens anew if asked again.
   */
  release?(options?: { exiting?: boolean }): void;
}

/**
 * Whether a value read back from a store has the shape of a StoredSession. Stores check this so that a damaged or
 * foreign entry is reported as such instead of surfacing later as `undefined` tokens.
 */
export function isStoredSession(value: unknown): value is StoredSession {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.accessToken === 'string' &&
    typeof v.tokenType === 'string' &&
    typeof v.obtainedAt === 'number' &&
    Array.isArray(v.scopes) &&
    v.scopes.every((scope) => typeof scope === 'string') &&
    optional(v.refreshToken, 'string') &&
    optional(v.idToken, 'string') &&
    optional(v.clientSecret, 'string') &&
    optional(v.expiresAt, 'number') &&
    (v.dpopKey === undefined || (typeof v.dpopKey === 'object' && v.dpopKey !== null))
  );
}

function optional(value: unknown, type: 'string' | 'number'): boolean {
  return value === undefined || typeof value === type;
}
