/**
 * bearerWhenUntyped: only a 200 JSON object with an access_token and no token_type member gains `token_type:
 * "Bearer"` (and a note); everything else reaches oauth4webapi's checks as it came, so none of them is weakened.
 */
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { bearerWhenUntyped } from '../../../src/oauth/token-type.js';

const as: oauth.AuthorizationServer = { issuer: 'https://as.example', token_endpoint: 'https://as.example/token' };
const client: oauth.Client = { client_id: 'plat-test' };

function answer(body: unknown, status = 200, type = 'application/json'): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': type } });
}

async function read(response: Response): Promise<{ notes: string[]; response: Response }> {
  const notes: string[] = [];
  return { notes, response: await bearerWhenUntyped({ fetch: globalThis.fetch as never, note: (text) => notes.push(text) }, response) };
}

describe('bearerWhenUntyped', () => {
  it('an access token without token_type is read as Bearer, with a note, and oauth4webapi accepts the rest as it is', async () => {
    const { notes, response } = await read(answer({ access_token: 'at-0123456789', expires_in: 60, refresh_token: 'rt-0123456789' }));
    expect(notes).toEqual([expect.stringMatching(/no token_type .* reads it as Bearer/)]);
    const result = await oauth.processRefreshTokenResponse(as, client, response);
    expect(result).toMatchObject({ access_token: 'at-0123456789', token_type: 'bearer', expires_in: 60, refresh_token: 'rt-0123456789' });
  });

  it.each<[string, Response]>([
    ['a present token_type (mac)', answer({ access_token: 'at', token_type: 'mac' })],
    ['a null token_type', answer({ access_token: 'at', token_type: null })],
    ['no access_token', answer({ expires_in: 60 })],
    ['an error status', answer({ error: 'invalid_grant' }, 400)],
    ['a JSON array', answer([{ access_token: 'at' }])],
    ['HTML', answer('<html>', 200, 'text/html')],
  ])('%s: passed on untouched, no note', async (_what, original) => {
    const { notes, response } = await read(original);
    expect(response).toBe(original);
    expect(notes).toEqual([]);
  });

  it('a type that is present and not Bearer is still refused downstream', async () => {
    const { response } = await read(answer({ access_token: 'at', token_type: 'mac' }));
    await expect(oauth.processRefreshTokenResponse(as, client, response)).rejects.toThrow(/unsupported `token_type` value/);
  });
});
