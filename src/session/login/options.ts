/**
 * What a login was asked for, as the command validated it. Its own module so that the steps of the login
 * (consent, the client choice) can take it without importing the flow that calls them.
 */
/**
 * Which OAuth client the login acts as, as the flags named it: `auto` reuses the profile's client at this issuer
 * (whatever kind it is) or registers plat; `registered` is a pre-registered integration (--client-id, with its
 * secret on stdin when --client-secret-stdin); `metadata-document` is a client ID metadata document URL.
 */
export type ClientChoice =
  | { kind: 'auto' }
  | { kind: 'registered'; clientId: string; secretOnStdin: boolean }
  | { kind: 'metadata-document'; url: string };

export interface LoginOptions {
  scope?: string[];
  addScope?: string[];
  browser: boolean;
  port?: number;
  /** An absolute URI without a fragment (RFC 8707), checked by the command. */
  resource?: string;
  /** Where the API's protected-resource document is (RFC 9728), when no well-known address has it. */
  resourceMetadata?: string;
  client: ClientChoice;
  timeoutSeconds: number;
  /** `--device`: the device authorization grant (RFC 8628) instead of the browser's redirect. */
  device?: boolean;
  /** false with `--no-dpop`: bearer tokens even where the server offers DPoP (RFC 9449). */
  dpop?: boolean;
  /** `--for`: the scopes planned for some operations (commands/scopes/plan.ts); then exactly these are asked for. */
  forScopes?: string[];
}
