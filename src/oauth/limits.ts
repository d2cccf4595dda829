/** OAuth documents and token responses are small; a server that streams megabytes at us is broken or hostile. */
export const MAX_OAUTH_BODY_BYTES = 1024 * 1024;
