import { describe, expect, it } from 'vitest';
import { apiRequestOf } from '../../../src/requests/api-request.js';

describe('apiRequestOf (a built request as the session sends it: batch lines, client.batch(), plat mcp)', () => {
  const url = new URL('https://school.example.com/api/courses');

  it('hands the JSON body over on every attempt, and none when there is none', () => {
    const request = apiRequestOf({ method: 'POST', url, headers: { 'content-type': 'application/json' }, jsonBody: '{"a":1}' });
    expect([request.method, request.url, request.headers]).toEqual(['POST', url, { 'content-type': 'application/json' }]);
    expect([request.body?.(), request.body?.()]).toEqual(['{"a":1}', '{"a":1}']);
    expect(apiRequestOf({ method: 'GET', url, headers: {} }).body).toBeUndefined();
  });

  it("adds the caller's deadline and cancellation", () => {
    const signal = new AbortController().signal;
    expect(apiRequestOf({ method: 'GET', url, headers: {} }, { timeoutMs: 5000, signal })).toMatchObject({ timeoutMs: 5000, signal });
  });
});
