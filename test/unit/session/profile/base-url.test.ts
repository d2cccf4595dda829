import { describe, expect, it } from 'vitest';
import { ExitCode, UsageError } from '../../../../src/errors.js';
import { isLoopbackHost, isSecureOrLoopback } from '../../../../src/oauth/base-url.js';
import { parseBaseUrl } from '../../../../src/session/profile/base-url.js';

describe('isLoopbackHost', () => {
  it('accepts 127.0.0.0/8, localhost and its subdomains, and ::1 with or without brackets', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '127.255.255.254', 'localhost', 'LOCALHOST', 'sub.localhost', '::1', '[::1]']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('refuses look-alikes and other addresses', () => {
    for (const host of ['128.0.0.1', '10.0.0.1', '0.0.0.0', 'localhost.evil.com', 'evil-localhost', '127.0.0.1.evil.com', 'x127.0.0.1', '::2', '[::ffff:7f00:1]']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('takes 127/8 as four dot-separated parts of one to three ASCII digits, nothing more or less', () => {
    for (const host of ['127.0.0.01', '127.000.000.001', '[127.0.0.1]']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['127.0.0', '127.0.0.1.5', '127.0.0.1234', '127.0.0.', '127..0.1', '127.0.0.a', '127.0.0.-1', '127.0.0.1 ', ' 127.0.0.1', '127.0.0.1\n', '127.0.0.\u0661', '１２７.0.0.1', '[]', '[', ']']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('isSecureOrLoopback', () => {
  it('allows https anywhere, http only on loopback, nothing else', () => {
    expect(isSecureOrLoopback(new URL('https://school.example'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://127.0.0.1:9/x'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://[::1]:9/x'))).toBe(true);
    expect(isSecureOrLoopback(new URL('http://school.example'))).toBe(false);
    expect(isSecureOrLoopback(new URL('ftp://127.0.0.1/'))).toBe(false);
  });
});

function usageErrorOf(input: string): UsageError {
  try {
    parseBaseUrl(input);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(ExitCode.usage);
    expect((error as UsageError).exitCode).toBe(2);
    return error as UsageError;
  }
  throw new Error(`parseBaseUrl(${JSON.stringify(input)}) did not throw`);
}

describe('parseBaseUrl', () => {
  it('accepts https and returns the origin without a trailing slash', () => {
    expect(parseBaseUrl('https://school.example.com/')).toBe('https://school.example.com');
    expect(parseBaseUrl('https://school.example.com')).toBe('https://school.example.com');
  });

  it('normalises scheme and host case and the default port', () => {
    expect(parseBaseUrl('HTTPS://School.Example.COM:443/')).toBe('https://school.example.com');
  });

  it('keeps a path but strips every trailing slash', () => {
    expect(parseBaseUrl('https://school.example.com/api/v1///')).toBe('https://school.example.com/api/v1');
  });

  it('accepts http only on loopback hosts, keeping the port', () => {
    expect(parseBaseUrl('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080');
    expect(parseBaseUrl('http://localhost:3000')).toBe('http://localhost:3000');
    expect(parseBaseUrl('http://[::1]:4000')).toBe('http://[::1]:4000');
  });

  it('refuses http on a non-loopback host, naming the origin', () => {
    expect(usageErrorOf('http://school.example.com').message).toContain('http://school.example.com');
    usageErrorOf('http://localhost.evil.com');
    usageErrorOf('http://128.0.0.1');
  });

  it('refuses credentials, query and fragment', () => {
    expect(usageErrorOf('https://user:pw@school.example.com').message).toMatch(/user name or password/);
    expect(usageErrorOf('https://user@school.example.com').message).toMatch(/user name or password/);
    expect(usageErrorOf('https://school.example.com/?tenant=1').message).toMatch(/query or fragment/);
    expect(usageErrorOf('https://school.example.com/#top').message).toMatch(/query or fragment/);
  });

  it('refuses other schemes and strings that are not URLs', () => {
    expect(usageErrorOf('ftp://school.example.com').message).toMatch(/https:\/\//);
    usageErrorOf('javascript:alert(1)');
    expect(usageErrorOf('school.example.com').message).toContain('is not a URL');
    usageErrorOf('');
    usageErrorOf('https://');
  });
});
