/**
 * DPoP proofs made by the test, independently of plat's code (RFC 9449 §4.2), to show what a server does with a
 * token plat holds: with a proof from the session's own key (read from the token store), or from another key.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

/** The private key of a stored DPoP-bound session (readStoredSession(home).dpopKey). */
export const sessionKey = (session: Record<string, any>): KeyObject => createPrivateKey({ key: session.dpopKey.jwk, format: 'jwk' });

/** A P-256 key that is not the session's. */
export const otherKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

/** An ES256 proof for `method url`, signed with `key` (a P-256 private key); with `token`'s ath when one is given. */
export function dpopProof(key: KeyObject, method: string, url: string, token?: string, nonce?: string): string {
  const { kty, crv, x, y } = key.export({ format: 'jwk' });
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })}.${part({
    jti: randomUUID(),
    htm: method,
    htu: url,
    iat: Math.floor(Date.now() / 1000),
    ...(token ? { ath: createHash('sha256').update(token).digest('base64url') } : {}),
    ...(nonce ? { nonce } : {}),
  })}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}
