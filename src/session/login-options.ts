/**
 * What a login was asked for, as the command validated it. Its own module so that the steps of the login
 * (consent, the client choice) can take it without importing the flow that calls them.
 */
export interface LoginOptions {
  scope?: string[];
  addScope?: string[];
  browser: boolean;
  port?: number;
  resource?: string;
  clientId?: string;
  clientSecretStdin?: boolean;
  clientMetadataUrl?: string;
  timeoutSeconds: number;
  /** `--for`: the scopes planned for some operations (commands/scopes-plan.ts); then exactly these are asked for. */
  forScopes?: string[];
}
