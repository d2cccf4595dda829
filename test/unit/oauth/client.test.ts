/** The shape plat accepts for --client-metadata-url (the draft's rules for a client_id URL), without a server. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { parseClientMetadataUrl } from '../../../src/oauth/client.js';

describe('parseClientMetadataUrl', () => {
  it.each([
    'https://example.com/plat/client.json',
    'https://s/plat.json', // a host whose name also occurs in the scheme
    'https://example.com/a/..b/client.json?v=2', // ".." inside a segment is not a dot segment
    'http://127.0.0.1:8080/client.json',
    'http://localhost/client.json',
  ])('accepts %s unchanged (the client_id must match the document byte for byte)', (url) => {
    expect(parseClientMetadataUrl(url)).toBe(url);
  });

  it.each([
    ['https://s/', /needs a path/],
    ['https://example.com?x=1', /needs a path/],
    ['https://example.com/a/%2E%2E/client.json', /\. or \.\. path segments/],
    ['https://example.com/./client.json', /\. or \.\. path segments/],
    ['https://a:b@example.com/client.json', /user name or password/],
    ['http://example.com/client.json', /http:\/\/ is accepted only for/],
    ['ftp://example.com/client.json', /http:\/\/ is accepted only for/],
  ])('refuses %s', (url, message) => {
    expect(() => parseClientMetadataUrl(url)).toThrow(UsageError);
    expect(() => parseClientMetadataUrl(url)).toThrow(message);
  });
});
