// Static documents the platform publishes besides oidc-provider's own: RFC 9728 metadata, OpenAPI, auth.md.

import { listPaths } from './lists.mjs';
import { OPERATIONS, pathsOf } from './operations.mjs';
import { ALL_SCOPES, API_SCOPES, SCOPE_TABLE } from './scopes.mjs';

/**
 * RFC 9728 Protected Resource Metadata for the API at baseUrl.
 * @param {string} baseUrl
 * @param {string} issuer
 */
export function protectedResourceMetadata(baseUrl, issuer) {
  return {
    resource: baseUrl,
    authorization_servers: [issuer],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'Learning Platform API',
    resource_documentation: `${baseUrl}/auth.md`,
  };
}

/**
 * OpenAPI 3.1 description of the demo API, generated from operations.mjs's list.
 * @param {string} baseUrl
 */
export function openApiDocument(baseUrl) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Learning Platform API (reference platform)',
      version: '1.0.0',
      description: 'The test platform used by plat. Requests without a token are served anonymously.',
    },
    servers: [{ url: baseUrl }],
    // The operations (operations.mjs), and the paginated lists, one per pagination style (lists.mjs).
    paths: { ...pathsOf(OPERATIONS), ...listPaths() },
    components: {
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'Authorization Code with PKCE (S256). Clients register dynamically (RFC 7591).',
          flows: {
            authorizationCode: {
              authorizationUrl: `${baseUrl}/oauth/authorize`,
              tokenUrl: `${baseUrl}/api/oauth/token`,
              refreshUrl: `${baseUrl}/api/oauth/token`,
              scopes: Object.fromEntries(SCOPE_TABLE),
            },
          },
        },
      },
    },
  };
}

/** @param {string} baseUrl */
export function authMarkdown(baseUrl) {
  return `# Signing in to the Learning Platform API

1. Discover: GET ${baseUrl}/.well-known/oauth-protected-resource, then the authorization server metadata at
   ${baseUrl}/.well-known/oauth-authorization-server (the source of truth for every endpoint).
2. Register: POST ${baseUrl}/api/oauth/register with JSON
   \`{"client_name":"my-cli","application_type":"native","redirect_uris":["http://127.0.0.1:<port>/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"]}\`.
   Only loopback redirect URIs are accepted; anything else gets \`invalid_redirect_uri\`.
3. Authorize: open ${baseUrl}/oauth/authorize?response_type=code&client_id=...&redirect_uri=...&scope=...&code_challenge=...&code_challenge_method=S256&state=...
   and approve. The redirect carries \`code\`, \`state\` and \`iss\` (RFC 9207): check both.
4. Token: POST ${baseUrl}/api/oauth/token (form) with \`grant_type=authorization_code\`, \`code\`, \`redirect_uri\`,
   \`client_id\`, \`code_verifier\`. Refresh with \`grant_type=refresh_token\`; refresh tokens rotate on every use and
   an old one is rejected with \`invalid_grant\`.
5. Call the API with \`Authorization: Bearer <ACCESS_TOKEN>\`. Without a token a request is served anonymously.
   401 \`invalid_token\` and 403 \`insufficient_scope\` carry \`WWW-Authenticate\` with \`resource_metadata\`.
6. Revoke: POST ${baseUrl}/api/oauth/revoke (form) with \`token\` and \`client_id\`.

API scopes: ${API_SCOPES.map((s) => `\`${s}\``).join(', ')}.
`;
}
