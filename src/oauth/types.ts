/**
 * What the protocol layer hands back, in its own words. The session maps these to what it stores
 * (src/store/types.ts): the shapes agree field by field where they overlap, so the seam is a plain assignment that
 * the compiler checks, and the protocol never learns how or where anything is kept.
 */
import type { DpopKey } from './dpop.js';

/** The OAuth client plat acts as at one authorization server. */
export interface OAuthClient {
  clientId: string;
  /**
   * `none` for public clients, `client_secret_post` for confidential integrations (which send their secret as the
   * server's metadata prefers: in the form, or with HTTP Basic where only client_secret_basic is listed).
   */
  authMethod: 'none' | 'client_secret_post';
  /**
   * How a confidential client plat registered sends its secret, when the server assigned the method (RFC 7591
   * §3.2.1): that method at every endpoint. Absent: as the server's metadata prefers (see secretMethod).
   */
  secretMethod?: 'client_secret_post' | 'client_secret_basic';
  /** When the server said the registered secret expires (RFC 7591 client_secret_expires_at), epoch ms; absent: never. */
  secretExpiresAt?: number;
  /** The issuer this client belongs to: a registration is valid only at the issuer that made it. */
  issuer: string;
  redirectUris: string[];
  /** The scopes plat registered it for (RFC 7591 `scope`); absent for older registrations and pre-registered clients. */
  scopes?: string[];
  /** The grant types plat registered it for (RFC 7591 `grant_types`); absent for older registrations and pre-registered clients. */
  grantTypes?: string[];
  /** true when plat registered it itself (RFC 7591), false for a pre-registered integration or metadata document. */
  dynamic: boolean;
  /** When plat obtained it, epoch milliseconds. */
  registeredAt: number;
}

/** A token endpoint's answer (RFC 6749 §5.1), checked and with the expiry made absolute. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  tokenType: string;
  /** Absolute expiry of the access token, epoch milliseconds; absent when the server did not say. */
  expiresAt?: number;
  /** When the access token was obtained, epoch milliseconds. */
  obtainedAt: number;
  scopes: string[];
  /** The server's expires_in was longer than plat keeps (MAX_TOKEN_LIFETIME_S): expiresAt is capped. */
  lifetimeCapped?: true;
  /** The key a DPoP-bound token (tokenType `DPoP`) is bound to; absent for Bearer. */
  dpopKey?: DpopKey;
}

/** The non-secret facts about the signed-in user (OIDC Core §5.1 claims). */
export interface UserIdentity {
  sub: string;
  name?: string;
  email?: string;
  preferredUsername?: string;
}
