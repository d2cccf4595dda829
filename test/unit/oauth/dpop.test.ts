/** src/oauth/dpop.ts: the key, its thumbprint, and the proofs it signs, checked by an independent verifier (jose). */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { asksForDpopNonce, chooseDpopAlgorithm, dpopNonceFor, dpopProof, dpopThumbprint, isUsableDpopKey, makeDpopKey, publicJwk } from '../../../src/oauth/dpop.js';

describe('chooseDpopAlgorithm', () => {
  it('ES256 wherever offered, else the first listed that plat signs with, else none', () => {
    expect(chooseDpopAlgorithm(['Ed25519', 'ES256'])).toBe('ES256');
    expect(chooseDpopAlgorithm(['HS256', 'PS256', 'EdDSA'])).toBe('PS256');
    expect(chooseDpopAlgorithm(['HS256'])).toBeUndefined();
    expect(chooseDpopAlgorithm(undefined)).toBeUndefined();
  });
});

describe('dpopThumbprint', () => {
  it("is RFC 7638's: the example key of §3.1 gives the thumbprint the RFC prints", () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
    const key = { alg: 'RS256', jwk: { kty: 'RSA', n, e: 'AQAB', alg: 'RS256', kid: '2011-04-29' } };
    expect(dpopThumbprint(key)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('agrees with jose for each algorithm plat makes keys for', async () => {
    for (const alg of ['ES256', 'ES384', 'EdDSA', 'PS256']) {
      const key = makeDpopKey(alg);
      expect(dpopThumbprint(key)).toBe(await calculateJwkThumbprint(publicJwk(key) as never));
      expect(publicJwk(key)).not.toHaveProperty('d');
    }
  });
});

describe('dpopProof', () => {
  it('verifies with its embedded key and carries htm, htu without query and fragment, iat, a unique jti and ath', async () => {
    const key = makeDpopKey('ES256');
    const url = new URL('https://school.example.com/api/courses?page=2#x');
    const now = Date.now();
    const proofs = [1, 2].map(() => dpopProof(key, { method: 'get', url, accessToken: 'token-1', now }));
    const { payload, protectedHeader } = await jwtVerify(proofs[0]!, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256'] });
    expect(payload).toMatchObject({ htm: 'GET', htu: 'https://school.example.com/api/courses', iat: Math.floor(now / 1000) });
    expect(payload.ath).toBe(createHash('sha256').update('token-1').digest('base64url'));
    expect(protectedHeader.jwk).not.toHaveProperty('d');
    expect(await calculateJwkThumbprint(protectedHeader.jwk!)).toBe(dpopThumbprint(key));
    const second = await jwtVerify(proofs[1]!, EmbeddedJWK, { typ: 'dpop+jwt' });
    expect(second.payload.jti).not.toBe(payload.jti);
    expect(decodeProtectedHeader(proofs[0]!).alg).toBe('ES256');
  });

  it('carries the nonce its origin gave last, and only that origin\'s', async () => {
    const key = makeDpopKey('EdDSA');
    const origin = 'https://nonce.example.com';
    expect(asksForDpopNonce(401, { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': 'n-1' }, origin)).toBe(true);
    expect(dpopNonceFor(origin)).toBe('n-1');
    const { payload } = await jwtVerify(dpopProof(key, { method: 'POST', url: new URL(`${origin}/x`), now: Date.now() }), EmbeddedJWK);
    expect(payload.nonce).toBe('n-1');
    expect(payload).not.toHaveProperty('ath');
    const elsewhere = await jwtVerify(dpopProof(key, { method: 'POST', url: new URL('https://other.example.com/x'), now: Date.now() }), EmbeddedJWK);
    expect(elsewhere.payload).not.toHaveProperty('nonce');
    // A 401 that is not about the nonce, or has no nonce to use, is not one to answer.
    expect(asksForDpopNonce(401, { 'www-authenticate': 'DPoP error="invalid_token"', 'dpop-nonce': 'n-2' }, origin)).toBe(false);
    expect(asksForDpopNonce(401, { 'www-authenticate': 'DPoP error="use_dpop_nonce"' }, 'https://none.example.com')).toBe(false);
  });
});

describe('isUsableDpopKey', () => {
  it('refuses what a damaged store could hand back', () => {
    const key = makeDpopKey('ES256');
    expect(isUsableDpopKey(key)).toBe(true);
    expect(isUsableDpopKey(undefined)).toBe(false);
    expect(isUsableDpopKey({ alg: 'ES256', jwk: { ...key.jwk, d: undefined } })).toBe(false);
    expect(isUsableDpopKey({ alg: 'HS256', jwk: key.jwk })).toBe(false);
    expect(isUsableDpopKey({ alg: 'EdDSA', jwk: key.jwk })).toBe(false);
  });
});
