/**
 * DPoP (RFC 9449): the key pair a bound session keeps, and the proofs it signs, with node:crypto alone (no Fetch
 * globals, no protocol library: a call on a bound session pays one signature and, in a plain bundle, the read of
 * dist/refresh.cjs that holds this module, session/tokens/refresh-bundle.ts). Loaded only for a session whose token
 * type is DPoP, and by login where the server offers it; a bearer session never loads it.
 *
 * The server's `DPoP-Nonce` (§8, §9) is kept per origin for the life of the process; a proof carries the one its
 * origin gave last.
 * @see https://www.rfc-editor.org/rfc/rfc9449
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, constants, type KeyObject, type JsonWebKey, webcrypto } from 'node:crypto';

/** What a bound session keeps beside its refresh token: the algorithm and the private key as a JWK (`d` included). */
export interface DpopKey {
  /** One of the algorithms plat signs with (isUsableDpopKey checks a key read back from a store). */
  alg: string;
  jwk: JsonWebKey;
}

/** The algorithms plat signs with, in the order it prefers them (ES256 wherever offered, as RFC 9449 §5.1 expects). */
const SUPPORTED = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256'] as const;
export type DpopAlgorithm = (typeof SUPPORTED)[number];

/** ES256 where the server lists it, else the first algorithm it lists that plat can sign with; undefined: none. */
export function chooseDpopAlgorithm(offered: readonly unknown[] | undefined): DpopAlgorithm | undefined {
  if (!Array.isArray(offered)) return undefined;
  if (offered.includes('ES256')) return 'ES256';
  return offered.find((alg): alg is DpopAlgorithm => (SUPPORTED as readonly unknown[]).includes(alg));
}

/** A new key pair for one login. */
export function makeDpopKey(alg: string): DpopKey {
  const { privateKey } =
    alg === 'ES256' || alg === 'ES384'
      ? generateKeyPairSync('ec', { namedCurve: alg === 'ES256' ? 'P-256' : 'P-384' })
      : alg === 'EdDSA' || alg === 'Ed25519'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { alg, jwk: privateKey.export({ format: 'jwk' }) };
}

/** The public half of the key, as a proof's `jwk` header carries it (RFC 7638's required members only). */
export function publicJwk(key: DpopKey): JsonWebKey {
  const { kty, crv, x, y, n, e } = key.jwk;
  if (kty === 'EC') return { crv, kty, x, y };
  if (kty === 'OKP') return { crv, kty, x };
  return { e, kty, n };
}

/** RFC 7638 JWK SHA-256 thumbprint of the public key: the `jkt` a bound token carries in its `cnf`. */
export function dpopThumbprint(key: DpopKey): string {
  const jwk = publicJwk(key);
  // The required members in lexicographic order, no whitespace (RFC 7638 §3.2).
  const members = Object.keys(jwk).sort().map((name) => `${JSON.stringify(name)}:${JSON.stringify(jwk[name as keyof JsonWebKey])}`);
  return createHash('sha256').update(`{${members.join(',')}}`).digest('base64url');
}

/**
 * Whether a value read back from a store is a key plat can sign with: the algorithm and a private JWK of its kind.
 * Anything else is a damaged key, and the session it belongs to is ended (never used as bearer).
 */
export function isUsableDpopKey(value: unknown): value is DpopKey {
  if (!value || typeof value !== 'object') return false;
  const { alg, jwk } = value as { alg?: unknown; jwk?: unknown };
  if (!(SUPPORTED as readonly unknown[]).includes(alg) || !jwk || typeof jwk !== 'object') return false;
  try {
    keyObject(value as DpopKey);
    return true;
  } catch {
    return false;
  }
}

const keyObjects = new Map<string, KeyObject>();

/** The private key as node:crypto signs with it, made once per process; a key not of its algorithm's kind throws. */
function keyObject(key: DpopKey): KeyObject {
  if (typeof key.jwk.d !== 'string' || !key.jwk.d) throw new Error('the key has no private part');
  const id = `${key.alg} ${key.jwk.d}`;
  let found = keyObjects.get(id);
  if (!found) {
    found = createPrivateKey({ key: key.jwk, format: 'jwk' });
    const kind = found.asymmetricKeyType;
    const curve = found.asymmetricKeyDetails?.namedCurve;
    const fits =
      key.alg === 'ES256' ? kind === 'ec' && curve === 'prime256v1' : key.alg === 'ES384' ? kind === 'ec' && curve === 'secp384r1' : key.alg.startsWith('Ed') ? kind === 'ed25519' : kind === 'rsa';
    if (!fits) throw new Error('the key is not of its algorithm’s kind');
    keyObjects.set(id, found);
  }
  return found;
}

const nonces = new Map<string, string>();

/** The server's latest `DPoP-Nonce` for `origin`, remembered for this process. */
export function rememberDpopNonce(origin: string, nonce: string | string[] | undefined): void {
  const value = Array.isArray(nonce) ? nonce[nonce.length - 1] : nonce;
  // RFC 9449 §8.1: a nonce is 1*NQCHAR; anything else is not one plat sends back.
  if (value && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(value) && value.length <= 1024) nonces.set(origin, value);
}

export function dpopNonceFor(origin: string): string | undefined {
  return nonces.get(origin);
}

/**
 * A fresh proof for one request (RFC 9449 §4.2): `htm`, `htu` without query and fragment, `iat`, a unique `jti`,
 * `ath` when it goes with an access token, and the origin's nonce when it gave one.
 */
export function dpopProof(key: DpopKey, request: { method: string; url: URL; accessToken?: string; nonce?: string; now: number }): string {
  const header = { typ: 'dpop+jwt', alg: key.alg, jwk: publicJwk(key) };
  const nonce = request.nonce ?? dpopNonceFor(request.url.origin);
  const payload = {
    jti: randomBytes(16).toString('base64url'),
    htm: request.method.toUpperCase(),
    htu: `${request.url.origin}${request.url.pathname}`,
    iat: Math.floor(request.now / 1000),
    ...(request.accessToken ? { ath: createHash('sha256').update(request.accessToken).digest('base64url') } : {}),
    ...(nonce ? { nonce } : {}),
  };
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${signature(key, Buffer.from(input)).toString('base64url')}`;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function signature(key: DpopKey, data: Buffer): Buffer {
  const privateKey = keyObject(key);
  switch (key.alg) {
    case 'ES256':
      return sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    case 'ES384':
      return sign('sha384', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    case 'EdDSA':
    case 'Ed25519':
      return sign(null, data, privateKey);
    case 'PS256':
      return sign('sha256', data, { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
    case 'RS256':
      return sign('sha256', data, privateKey);
    default:
      throw new Error(`plat cannot sign DPoP proofs with ${key.alg}`);
  }
}

/** The `Authorization` and `DPoP` headers of one use of a bound token. */
export function dpopHeaders(key: DpopKey, token: string, method: string, url: URL, now: number): { authorization: string; dpop: string } {
  return { authorization: `DPoP ${token}`, dpop: dpopProof(key, { method, url, accessToken: token, now }) };
}

/**
 * A 401 whose challenge says `use_dpop_nonce` (RFC 9449 §9) and a `DPoP-Nonce` to use: the nonce is kept, and the
 * request may be sent once more with a proof that carries it.
 */
export function asksForDpopNonce(status: number, headers: Record<string, string | string[] | undefined>, origin: string): boolean {
  const nonce = headers['dpop-nonce'];
  if (nonce) rememberDpopNonce(origin, nonce);
  if (status !== 401 && status !== 400) return false;
  const challenge = [headers['www-authenticate']].flat().join(', ');
  return Boolean(nonce) && /\bdpop\b[^]*error\s*=\s*"?use_dpop_nonce/i.test(challenge);
}

/** A key pair in Web Crypto form, for oauth4webapi's DPoP handle at the token endpoint. */
export async function dpopCryptoKeyPair(key: DpopKey): Promise<{ privateKey: webcrypto.CryptoKey; publicKey: webcrypto.CryptoKey }> {
  const { subtle } = webcrypto;
  const algorithm =
    key.alg === 'ES256' || key.alg === 'ES384'
      ? { name: 'ECDSA', namedCurve: key.alg === 'ES256' ? 'P-256' : 'P-384' }
      : key.alg === 'EdDSA' || key.alg === 'Ed25519'
        ? { name: 'Ed25519' }
        : { name: key.alg === 'PS256' ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, key_ops: _ops, ...pub } = key.jwk as Record<string, unknown>;
  const [privateKey, publicKey] = await Promise.all([
    subtle.importKey('jwk', key.jwk as webcrypto.JsonWebKey, algorithm, false, ['sign']),
    subtle.importKey('jwk', pub as webcrypto.JsonWebKey, algorithm, true, ['verify']),
  ]);
  return { privateKey, publicKey };
}
