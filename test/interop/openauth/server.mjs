/**
 * OpenAuth (@openauthjs/openauth) started as its documentation starts it on Node: `issuer()` with a password
 * provider and its stock UI, in-memory storage, a `success` callback that names the subject, served by
 * @hono/node-server. Its own choices, kept as they are: no dynamic registration (clients are allowed by the `allow`
 * callback: here only the pre-registered client ID `plat-cli` on a loopback redirect), no UserInfo, no revocation,
 * no ID token, no scopes, and token responses without `token_type` (RFC 6749 §5.1 requires it).
 *
 * Beside it, on its own origin, the API a person would build with OpenAuth's client: `createClient().verify()` of
 * the JWT access token (the issuer's JWKS, its subject schema), and its RFC 9728 document naming the issuer.
 *
 * The person signs up as the password provider has them do (an email code); here the account exists from the start,
 * its password hashed with the provider's own hasher where the provider keeps it.
 *
 * Usage: node server.mjs; prints {"port": N, "issuer": "..."} on stdout when both listen. `/_test/state` on the
 * API's origin exposes the issuer's records (not part of any protocol).
 */
import { serve } from '@hono/node-server';
import { issuer } from '@openauthjs/openauth';
import { createClient } from '@openauthjs/openauth/client';
import { PasswordProvider, ScryptHasher } from '@openauthjs/openauth/provider/password';
import { MemoryStorage } from '@openauthjs/openauth/storage/memory';
import { Storage } from '@openauthjs/openauth/storage/storage';
import { createSubjects } from '@openauthjs/openauth/subject';
import { PasswordUI } from '@openauthjs/openauth/ui/password';
import { createServer } from 'node:http';
import { z } from 'zod';

const CLIENT_ID = 'plat-cli';
const USER = { email: 'mary@example.test', password: 'hidden figures' };

const subjects = createSubjects({ user: z.object({ id: z.string() }) });
const storage = MemoryStorage();
await Storage.set(storage, ['email', USER.email, 'password'], await ScryptHasher().hash(USER.password));

const app = issuer({
  subjects,
  storage,
  providers: {
    password: PasswordProvider(
      PasswordUI({
        sendCode: async (email, code) => console.error(`sign-up code for ${email}: ${code}`),
      }),
    ),
  },
  allow: async ({ clientID, redirectURI }) => clientID === CLIENT_ID && ['127.0.0.1', 'localhost'].includes(new URL(redirectURI).hostname),
  success: async (ctx, value) => {
    if (value.provider === 'password') return ctx.subject('user', { id: `user:${value.email}` });
    throw new Error('unknown provider');
  },
});

const issuerPort = await new Promise((resolve) => {
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
});
const issuerUrl = `http://127.0.0.1:${issuerPort}`;
const client = createClient({ clientID: CLIENT_ID, issuer: issuerUrl });

const api = createServer();
await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${api.address().port}`;

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

api.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, origin);
    if (url.pathname === '/.well-known/oauth-protected-resource') {
      return send(res, 200, { resource: origin, authorization_servers: [issuerUrl], bearer_methods_supported: ['header'] });
    }
    if (url.pathname === '/_test/state') {
      const refresh = [];
      for await (const [key] of Storage.scan(storage, ['oauth:refresh'])) refresh.push(key.join(':'));
      return send(res, 200, { issuer: issuerUrl, clientId: CLIENT_ID, refreshTokens: refresh });
    }
    if (url.pathname === '/v1/courses') {
      const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const verified = token ? await client.verify(subjects, token) : undefined;
      if (!verified || verified.err) {
        return send(res, 401, { error: 'unauthorized' }, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource"` });
      }
      return send(res, 200, { items: [{ title: 'Orbital mechanics' }], user: verified.subject.properties.id });
    }
    return send(res, 404, { error: 'not_found' });
  } catch (error) {
    send(res, 500, { error: 'server_error', error_description: String(error?.message ?? error) });
  }
});

// The test runner holds stdin open; when it goes, so does the server.
process.stdin.on('end', () => process.exit(0)).resume();
console.log(JSON.stringify({ port: api.address().port, issuer: issuerUrl }));
