/** src/session/origin-headers.ts: what of the user's -H goes on to a page on another origin. */
import { describe, expect, it } from 'vitest';
import { headersForOtherOrigin } from '../../../src/session/origin-headers.js';

describe('headersForOtherOrigin', () => {
  it('keeps what describes the request, every If-* conditional among it, and holds back anything else', () => {
    const { kept, dropped } = headersForOtherOrigin({
      Accept: 'application/json',
      'If-None-Match': '"a"',
      'If-Unmodified-Since': 'Sat, 28 Nov 2026 00:00:00 GMT',
      'If-Range': '"b"',
      'X-Api-Key': 'secret',
      Authorization: 'Bearer t',
    });
    expect(Object.keys(kept)).toEqual(['Accept', 'If-None-Match', 'If-Unmodified-Since', 'If-Range']);
    expect(dropped).toEqual(['X-Api-Key', 'Authorization']);
  });
});
