import { describe, expect, it } from 'vitest';
import { describeUser, expiryText, iso, relative } from '../../../../src/commands/shared/format.js';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

describe('relative', () => {
  it('says "in …" for the future and "… ago" for the past, in the largest fitting unit', () => {
    expect(relative(NOW + 59 * 60_000, NOW)).toBe('in 59 minutes');
    expect(relative(NOW - 3 * 60_000, NOW)).toBe('3 minutes ago');
    expect(relative(NOW + 2 * 3_600_000, NOW)).toBe('in 2 hours');
    expect(relative(NOW - 3 * 86_400_000, NOW)).toBe('3 days ago');
    expect(relative(NOW + 45_000, NOW)).toBe('in 45 seconds');
    // singular for one
    expect(relative(NOW + 3_600_000, NOW)).toBe('in 1 hour');
    expect(relative(NOW - 86_400_000, NOW)).toBe('1 day ago');
    expect(relative(NOW + 60_000, NOW)).toBe('in 1 minute');
  });

  it('rounds within the unit, down to less than a second', () => {
    expect(relative(NOW + 90 * 60_000 + 1, NOW)).toBe('in 2 hours');
    expect(relative(NOW + 89 * 60_000, NOW)).toBe('in 1 hour');
    // less than a second
    expect(relative(NOW, NOW)).toBe('0 seconds ago'); // the boundary counts as past, like expiryText's "expired"
    expect(relative(NOW - 400, NOW)).toBe('0 seconds ago');
  });
});

describe('expiryText', () => {
  it('says so when the server gave no expiry', () => {
    expect(expiryText(undefined, NOW)).toBe('unknown (the server did not say)');
  });

  it('future expiry: "expires in …" with the ISO time', () => {
    const at = NOW + 59 * 60_000;
    expect(expiryText(at, NOW)).toBe(`expires in 59 minutes (${new Date(at).toISOString()})`);
  });

  it('past expiry: "expired … ago" with the ISO time', () => {
    const at = NOW - 5 * 60_000;
    expect(expiryText(at, NOW)).toBe('expired 5 minutes ago (2025-01-15T11:55:00.000Z)');
    expect(iso(undefined)).toBeNull();
  });
});

describe('describeUser', () => {
  it('an absent user is "an unknown user"', () => {
    expect(describeUser(undefined)).toBe('an unknown user');
  });

  it('name with email in angle brackets', () => {
    expect(describeUser({ sub: 'u1', name: 'Ada Lovelace', email: 'ada@example.test' })).toBe('Ada Lovelace <ada@example.test>');
  });

  it('falls back from name to preferred username to subject', () => {
    expect(describeUser({ sub: 'u1', preferredUsername: 'ada' })).toBe('ada');
    expect(describeUser({ sub: 'u1' })).toBe('u1');
    expect(describeUser({ sub: 'u1', email: 'ada@example.test' })).toBe('u1 <ada@example.test>');
    // an email that already is the name is not repeated
    expect(describeUser({ sub: 'u1', name: 'ada@example.test', email: 'ada@example.test' })).toBe('ada@example.test');
  });
});

describe('expiryText at the boundary', () => {
  it('says "expired … ago", never "expired in"', () => {
    expect(expiryText(NOW, NOW)).toMatch(/^expired 0 seconds ago/);
  });
});
