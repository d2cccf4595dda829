/** src/proxy/forward.ts's throughProxy: a Location on the platform as the proxy's own address. */
import { describe, expect, it } from 'vitest';
import { throughProxy } from '../../../src/proxy/forward.js';

const requested = new URL('https://school.example/v1/api/courses/x');

describe('throughProxy', () => {
  it('maps a Location below the base URL to the proxy path, key and query kept', () => {
    expect(throughProxy('/v1/api/courses?page=2', requested, 'https://school.example/v1', '/KEY')).toBe('/KEY/api/courses?page=2');
    expect(throughProxy('../y#top', requested, 'https://school.example/v1', '/KEY')).toBe('/KEY/api/y#top');
    expect(throughProxy('https://school.example/v1', requested, 'https://school.example/v1', '')).toBe('/');
  });

  it('leaves a Location elsewhere as it is: another origin, or outside the base path', () => {
    expect(throughProxy('https://elsewhere.example/v1/api', requested, 'https://school.example/v1', '/KEY')).toBeUndefined();
    expect(throughProxy('/v10/api', requested, 'https://school.example/v1', '/KEY')).toBeUndefined();
    expect(throughProxy('http://[bad', requested, 'https://school.example/v1', '/KEY')).toBeUndefined();
  });
});
