import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { AuthError, ExitCode, PlatError, UsageError } from '../../../src/errors.js';
import { oauthErrorOf, toPlatError } from '../../../src/oauth/errors.js';
import { sanitize } from '../../../src/terminal/text.js';
import { CALLBACK_ERRORS, validateCallback } from '../../../src/oauth/authorize.js';
import type { OAuthClient } from '../../../src/oauth/types.js';

const ISSUER = 'https://as.example';
const STEP = 'reading the authorization server metadata';
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const as: oauth.AuthorizationServer = { issuer: ISSUER, authorization_response_iss_parameter_supported: true };
const client: oauth.Client = { client_id: 'plat-test' };

async function thrownBy(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function mapped(error: unknown): PlatError {
  const result = toPlatError(error, STEP, ISSUER);
  expect(result).toBeInstanceOf(PlatError);
  // A sentence for a person: starts with a capital, ends with a full stop, one line, no control characters.
  expect(result.message).toMatch(/^[A-Z]/);
  expect(result.message).toMatch(/\.$/);
  expect(result.message).not.toMatch(CONTROL);
  return result;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('sanitize', () => {
  it('turns runs of control characters (C0, DEL, C1) into one space and trims', () => {
    expect(sanitize('\n bad\r\n\u001b[31mred\u0007\u0085end\t')).toBe('bad [31mred end');
    expect(sanitize(undefined)).toBe('');
    expect(sanitize(42)).toBe('42');
  });

  it('bounds the length with an ellipsis', () => {
    expect(sanitize('x'.repeat(300))).toBe(`${'x'.repeat(200)}…`);
    expect(sanitize('abcdef', 3)).toBe('abc…');
    expect(sanitize('abc', 3)).toBe('abc');
  });
});

describe('toPlatError', () => {
  it('passes PlatErrors through unchanged', () => {
    const original = new UsageError('Bad flag.');
    expect(toPlatError(original, STEP, ISSUER)).toBe(original);
  });

  it('an HTML answer where JSON was expected: exit 1, names the content type and origin', async () => {
    const error = await thrownBy(() =>
      oauth.processDiscoveryResponse(new URL(ISSUER), new Response('<html>hi</html>', { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } })),
    );
    expect(error).toBeInstanceOf(oauth.OperationProcessingError);
    const result = mapped(error);
    expect(result.exitCode).toBe(ExitCode.failure);
    expect(result.message).toContain(`While ${STEP}, ${ISSUER} did not answer with JSON (it sent text/html)`);
    expect(result.cause).toBe(error);
  });

  it('a JSON content type with a body that does not parse is reported as JSON that cannot be parsed', async () => {
    const error = await thrownBy(() =>
      oauth.processDiscoveryResponse(new URL(ISSUER), new Response('{"issuer":', { status: 200, headers: { 'content-type': 'application/json' } })),
    );
    expect((error as oauth.OperationProcessingError).code).toBe(oauth.PARSE_ERROR);
    const result = mapped(error);
    expect(result.message).toContain('sent JSON that cannot be parsed');
    expect(result.message).not.toContain('it sent');
  });

  it('an unexpected status names it', async () => {
    const error = await thrownBy(() => oauth.processDiscoveryResponse(new URL(ISSUER), new Response('oops', { status: 502 })));
    const result = mapped(error);
    expect(result.exitCode).toBe(ExitCode.failure);
    expect(result.message).toContain('unexpected HTTP 502');
  });

  it('an OAuth error body becomes "The server refused …" with the sanitised error and description', async () => {
    const error = await thrownBy(() =>
      oauth.processRevocationResponse(
        json({ error: 'invalid_client\u001b[2J', error_description: 'client\r\nauthentication\u0007failed' }, 401),
      ),
    );
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect(oauthErrorOf(error)).toEqual({ error: 'invalid_client [2J', description: 'client authentication failed', status: 401 });
    const result = toPlatError(error, 'revoking the token', ISSUER);
    expect(result.exitCode).toBe(ExitCode.failure);
    expect(result.message).toBe('The server refused revoking the token (invalid_client [2J: client authentication failed).');
    expect(result.message).not.toMatch(CONTROL);
    const bare = await thrownBy(() => oauth.processRevocationResponse(json({ error: 'unsupported_token_type' }, 400)));
    expect(toPlatError(bare, 'revoking the token', ISSUER).message).toBe('The server refused revoking the token (unsupported_token_type).');
  });

  it('access_denied in the callback is an authentication error (exit 4) that says what to do', async () => {
    const error = await thrownBy(() =>
      oauth.validateAuthResponse(as, client, new URLSearchParams({ error: 'access_denied', error_description: 'User\ndeclined', state: 's1', iss: ISSUER }), 's1'),
    );
    expect(error).toBeInstanceOf(oauth.AuthorizationResponseError);
    const result = mapped(error);
    expect(result).toBeInstanceOf(AuthError);
    expect(result.exitCode).toBe(ExitCode.auth);
    expect(result.message).toBe('Access was denied in the browser (User declined).');
  });

  it('another authorization error names the code (exit 4)', async () => {
    const error = await thrownBy(() =>
      oauth.validateAuthResponse(as, client, new URLSearchParams({ error: 'server_error', state: 's1', iss: ISSUER }), 's1'),
    );
    const result = mapped(error);
    expect(result.exitCode).toBe(ExitCode.auth);
    expect(result.message).toBe('The authorization server returned an error instead of a code: server_error.');
  });

  // state and iss are checked by validateCallback from the parameters themselves, one sentence each.
  const registration: OAuthClient = { clientId: 'plat-test', authMethod: 'none', issuer: ISSUER, redirectUris: ['http://127.0.0.1:1/callback'], dynamic: true, registeredAt: 0 };
  const callbackError = (query: Record<string, string> | string, server: oauth.AuthorizationServer = as) => {
    try {
      validateCallback(server, registration, new URL(`http://127.0.0.1:1/callback?${new URLSearchParams(query)}`), 's1');
    } catch (error) {
      return error as PlatError;
    }
    throw new Error('validateCallback accepted it');
  };

  it('a wrong or missing state is a state mismatch (exit 4)', () => {
    for (const params of [`state=forged&code=c&iss=${ISSUER}`, `code=c&iss=${ISSUER}`]) {
      const result = callbackError(params);
      expect(result).toBeInstanceOf(AuthError);
      expect(result.message).toBe(CALLBACK_ERRORS.state);
    }
  });

  it('a different iss is an iss mismatch (exit 4), whether or not the server announced iss', () => {
    for (const server of [as, { issuer: ISSUER }]) {
      const result = callbackError({ state: 's1', code: 'c', iss: 'https://evil.example' }, server);
      expect(result.exitCode).toBe(ExitCode.auth);
      expect(result.message).toBe(CALLBACK_ERRORS.issMismatch);
    }
  });

  it('a missing iss the server promised is reported as missing (exit 4); one it did not promise is fine', () => {
    const result = callbackError({ state: 's1', code: 'c' });
    expect(result.exitCode).toBe(ExitCode.auth);
    expect(result.message).toBe(CALLBACK_ERRORS.issMissing);
    const params = validateCallback({ issuer: ISSUER }, registration, new URL('http://127.0.0.1:1/callback?state=s1&code=c'), 's1');
    expect(params.get('code')).toBe('c');
  });

  it('a metadata document for another issuer is "did not match what it had announced"', async () => {
    const error = await thrownBy(() => oauth.processDiscoveryResponse(new URL(ISSUER), json({ issuer: 'https://other.example' })));
    expect((error as oauth.OperationProcessingError).code).toBe(oauth.JSON_ATTRIBUTE_COMPARISON);
    const result = mapped(error);
    expect(result.exitCode).toBe(ExitCode.failure);
    expect(result.message).toMatch(/did not match what it had announced/);
  });

  it('a plain-http endpoint is refused with an explanation', async () => {
    const error = await thrownBy(() => oauth.discoveryRequest(new URL('http://as.example')));
    expect((error as oauth.OperationProcessingError).code).toBe(oauth.HTTP_REQUEST_FORBIDDEN);
    expect(mapped(error).message).toMatch(/not https:\/\//);
  });

  it('missing server metadata names what was being done', async () => {
    const error = await thrownBy(() => oauth.revocationRequest(as, client, oauth.None(), 'some-token'));
    expect((error as oauth.OperationProcessingError).code).toBe(oauth.MISSING_SERVER_METADATA);
    const result = toPlatError(error, 'revoking the token', ISSUER);
    expect(result.message).toMatch(/^The server's metadata is unusable for revoking the token \(.*revocation_endpoint.*\)\.$/);
  });

  it('another protocol violation is "the server broke the protocol"', async () => {
    const error = await thrownBy(() => oauth.processDiscoveryResponse(new URL(ISSUER), json({ authorization_endpoint: 'https://as.example/a' })));
    const result = mapped(error);
    expect(result.message).toMatch(/^While reading the authorization server metadata, the server broke the protocol \(the response body "issuer"/);
  });

  it('unsupported operations and invalid-argument TypeErrors become PlatErrors with exit 1', async () => {
    const unsupported = await thrownBy(() =>
      oauth.validateAuthResponse(as, client, new URLSearchParams({ state: 's1', iss: ISSUER, id_token: 'x' }), 's1'),
    );
    expect(unsupported).toBeInstanceOf(oauth.UnsupportedOperationError);
    expect(mapped(unsupported).exitCode).toBe(ExitCode.failure);

    const used = json({ issuer: ISSUER });
    await used.text();
    const typeError = await thrownBy(() => oauth.processDiscoveryResponse(new URL(ISSUER), used));
    expect(typeError).toBeInstanceOf(TypeError);
    const result = mapped(typeError);
    expect(result.exitCode).toBe(ExitCode.failure);
    expect(result.message).toMatch(/the server sent an invalid response/);
  });

  it('anything else becomes "While <step>: <message>." with the message sanitised', () => {
    const result = mapped(new Error('socket\r\nhang up'));
    expect(result.message).toBe(`While ${STEP}: socket hang up.`);
    expect(mapped('a bare string').message).toBe(`While ${STEP}: a bare string.`);
  });
});
