/**
 * OAuth documents and token responses are small; a server that streams megabytes at us is broken or hostile. A module
 * of its own so that UserInfo (on the whoami path) reads it without loading oauth4webapi through options.ts.
 */
export const MAX_OAUTH_BODY_BYTES = 1024 * 1024;
