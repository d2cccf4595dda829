import type { IncomingMessage, ServerResponse } from 'node:http';

export interface PlatformOptions {
  /** 0 (default) = an ephemeral port. */
  port?: number;
  /** The platform always binds 127.0.0.1. */
  host?: '127.0.0.1';
  /** Access-token lifetime in seconds (default 3600); also `knobs.accessTokenTtl` at runtime. */
  accessTokenTtl?: number;
  /** Refresh-token lifetime in seconds (default 14 days); `knobs.refreshTokenTtl` wins when set. */
  refreshTokenTtl?: number;
  /** Extra static (pre-registered) client metadata, passed to oidc-provider's `clients`. */
  clients?: Array<Record<string, unknown>>;
  /**
   * Serve https with this PEM key and certificate (which must name IP 127.0.0.1): baseUrl and issuer become
   * https://127.0.0.1:<port>. Clients must trust the certificate (plat: NODE_EXTRA_CA_CERTS); approve() does.
   */
  tls?: { key: string; cert: string };
  /** How the pre-registered confidential integration authenticates; the metadata lists only that secret method. */
  confidentialAuthMethod?: 'client_secret_post' | 'client_secret_basic';
  /**
   * DPoP (RFC 9449) on: the metadata lists dpop_signing_alg_values_supported, a token request with a proof gets a
   * bound token, and the API checks every bound token's proof (signature, htm, htu, iat, jti, ath, cnf.jkt, nonce).
   */
  dpop?: boolean;
}

export type MetadataKnob = 'ok' | 'html' | 'truncated' | 'wrong-issuer' | 'missing-endpoints' | 'http-endpoint';
export type RegistrationKnob = 'ok' | 'error-500' | 'error-400-oauth' | 'error-400-plain' | 'no-client-id';
/** How a successful token response is mangled after the server issued (and rotated) the tokens. */
export type TokenResponseKnob = 'ok' | 'no-access-token' | 'token-type-mac' | 'negative-expires-in' | 'string-expires-in' | 'no-expires-in' | 'control-char-access-token' | 'huge-expires-in' | 'no-token-type';

export interface Knobs {
  /** Seconds; read whenever an access token is issued. */
  accessTokenTtl: number;
  /** Seconds; undefined = the `refreshTokenTtl` option. Read whenever a refresh token is issued. */
  refreshTokenTtl: number | undefined;
  /** true = loopback redirect URIs must match including the port (default: port ignored, RFC 8252 §7.3). */
  strictRedirectPort: boolean;
  /** Narrows the scopes the Approve button grants; null = grant what was requested. */
  grantScopes: ((requested: string[]) => string[]) | null;
  /** Applies to both /.well-known/oauth-authorization-server and /.well-known/openid-configuration. */
  metadata: MetadataKnob;
  /** Members set on both metadata documents after `metadata` applies (a null value deletes the member); null = none. */
  metadataOverrides: Record<string, unknown> | null;
  protectedResourceMetadata: 'ok' | 'missing';
  /**
   * 'slash-only': the OpenID configuration only at /.well-known/openid-configuration/ (the address without the
   * slash answers 301 to it, as Django's APPEND_SLASH does), the RFC 8414 address 404. Default 'ok'.
   */
  metadataAddress: 'ok' | 'slash-only';
  /**
   * An MCP-style endpoint at /mcp that serves only POST: without a token, 401 with a resource_metadata naming
   * /mcp-resource.json (the document for the resource <base>/mcp, at no well-known address); GET answers 405.
   */
  postOnlyMcp: boolean;
  /** Advertised code_challenge_methods_supported: undefined = oidc-provider's (['S256']), null = omit the field. */
  codeChallengeMethods: string[] | null | undefined;
  /** Advertised authorization_response_iss_parameter_supported (iss is still sent). */
  issParameterSupported: boolean;
  registration: RegistrationKnob;
  /** 'omitted' = token responses (code and refresh) carry no `scope` member; default 'granted'. */
  tokenResponseScope: 'granted' | 'omitted';
  /** Faults in successful token responses (code exchange and refresh); default 'ok'. */
  tokenResponse: TokenResponseKnob;
  /**
   * Client ID Metadata Documents: advertise `client_id_metadata_document_supported: true` and accept an https URL
   * as client_id, resolved by fetching its document (oidc-provider's own implementation). Default false.
   */
  clientIdMetadataDocuments: boolean;
  /**
   * Test-only, with `clientIdMetadataDocuments`: also accept `http://127.0.0.1:<port>/…` client_ids, fetched
   * without oidc-provider's SSRF protection, so tests can serve a document from a local origin. Default false.
   */
  clientIdMetadataDocumentsOverHttp: boolean;
  /** Client IDs the server has forgotten: they get invalid_client (and an error page at the authorization endpoint). */
  unknownClients: string[];
  /** Where `unknownClients` are unknown: 'everywhere' (default), or 'token' = only at the token endpoint. */
  unknownClientsAt: 'everywhere' | 'token';
  /** OIDC Core §11: list offline_access in scopes_supported and issue a refresh token only when it was granted. */
  offlineAccess: boolean;
  /** 'error-400' = revoking a token the server no longer knows answers 400 invalid_request (RFC 7009 says 200). */
  revokeUnknownToken: 'ok' | 'error-400';
  /** More RFC 8707 resources the server issues tokens for (an API on another origin that names it); default none. */
  extraResources: string[];
  /** true = every RFC 8707 resource is refused with invalid_target (a server that does not take resource indicators). */
  refuseResources: boolean;
  /** The `interval` of device authorization responses (RFC 8628 §3.2), seconds; undefined = none. Default 1. */
  deviceInterval: number | undefined;
  /** Seconds a device code lives; undefined = 600. */
  deviceCodeTtl: number | undefined;
  /** The `expires_in` device authorization responses tell the client, seconds; undefined = the code's real lifetime. */
  deviceExpiresIn: number | undefined;
  /** What a poll with an expired device code is answered: invalid_grant (oidc-provider forgets it) or expired_token. */
  deviceExpiredAnswer: 'invalid_grant' | 'expired_token';
  /** Answer this many device-code polls that would be authorization_pending with slow_down (RFC 8628 §3.5). */
  deviceSlowDown: number;
  /**
   * false = a refresh keeps the refresh token valid and its response carries no `refresh_token` member (RFC 6749 §6
   * allows a server not to rotate). Default true: every refresh rotates.
   */
  rotateRefreshTokens: boolean;
  /** Every API request (/api/…, not the OAuth endpoints) is answered this many milliseconds later. Default 0. */
  apiLatencyMs: number;
  /**
   * More than `perSecond` API requests in one second are answered 429 with `Retry-After: retryAfterSeconds`; from
   * then the server counts a pause (stats key "throttled", one event each) that long, and answers anything arriving
   * inside it 429 too (stats key "during-pause"). null (default) = no limit.
   */
  apiThrottle: { perSecond: number; retryAfterSeconds: number } | null;
  /**
   * DPoP nonces (with the `dpop` option): 'off' none; 'required' the token endpoint and the API ask for their nonce
   * (use_dpop_nonce) and accept it; 'always-new' the API refuses every proof with use_dpop_nonce and a new nonce.
   */
  dpopNonce: 'off' | 'required' | 'always-new';
  /** Seconds the API's clock is ahead when it checks a DPoP proof's iat (a skewed client, as the server sees it). */
  dpopClockOffset: number;
}

export interface PlatformEvent {
  method: string;
  path: string;
  key: string;
  at: number;
}

export interface PlatformStats {
  /**
   * Keys: "<METHOD> <path>", "token:<grant_type>", "register", "refresh-replay", and per revocation request the kind of
   * token it carried, as the server issued it: "revoke:access_token", "revoke:refresh_token", "revoke:unknown".
   */
  count(key: string): number;
  keys(): Record<string, number>;
  reset(): void;
  events: PlatformEvent[];
}

/** true = the handler answered the request on the raw node response. */
export type OverrideHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

/** Faults of the paginated list endpoints (/api/lists/<style>, test/platform/lists.mjs). */
export interface ListKnobs {
  /** That page's first `times` requests are answered with `status` (and Retry-After when set); null = none. */
  fail: { page: number; status: number; times: number; retryAfter?: string } | null;
  /** Pages answered, by style (any status). */
  served: Record<string, number>;
  /** Milliseconds spent answering pages (arrival to last byte written), for the benchmark. */
  busyMs: number;
  reset(): void;
}

export interface Platform {
  /** http://127.0.0.1:<port> (https with `tls`), no trailing slash; also the issuer and the protected resource identifier. */
  baseUrl: string;
  issuer: string;
  knobs: Knobs;
  /** Knobs of the paginated list endpoints. */
  lists: ListKnobs;
  stats: PlatformStats;
  /** The server's record of every authorization request it received (oidc-provider's parsed parameters), oldest first. */
  authorizations: Array<{ clientId: string; scope: string; resource: string | null }>;
  /** Every DPoP proof the API accepted, in order (with the `dpop` option). */
  dpopProofs: Array<{ jti: string; htm: string; htu: string; jkt: string; nonce?: string }>;
  /** The paths the API's route table serves (templates for parameterised ones), besides operations.mjs's own. */
  apiRoutePaths: string[];
  /** Every secret issued or received in this run: codes, tokens, code_verifiers, client secrets. */
  secrets(): string[];
  /** Most recently added override is consulted first; runs before every built-in route. */
  override(pathPrefix: string, handler: OverrideHandler): void;
  clearOverrides(): void;
  /** The state of a fresh platform for the next test: default knobs (and `accessTokenTtl` option), default list knobs, no overrides, empty stats. */
  reset(): void;
  /** Drives consent over HTTP and returns the client's redirect URL (not requested). */
  approve(authorizeUrl: string, options?: { deny?: boolean }): Promise<string>;
  /**
   * Drives the device flow's pages over HTTP (RFC 8628 §3.3): the verification address (with `userCode` typed into
   * its form when the address does not carry it), the confirmation, then Approve or Deny. Resolves with the last page's text.
   */
  approveDevice(verificationUrl: string, options?: { deny?: boolean; userCode?: string }): Promise<string>;
  close(): Promise<void>;
  /** oidc-provider's own record of a client (its registered metadata), or undefined when it knows none. */
  registeredClient(clientId: string): Promise<Record<string, unknown> | undefined>;
  preRegistered: {
    publicClientId: string;
    confidentialClientId: string;
    confidentialClientSecret: string;
  };
}

export function startPlatform(options?: PlatformOptions): Promise<Platform>;
