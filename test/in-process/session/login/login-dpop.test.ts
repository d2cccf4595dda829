/**
 * src/session/login/login.ts with DPoP, in-process on the reference platform with DPoP on: a token store that does not
 * give the key back whole (a keychain entry cut short, a store that drops what it does not know) ends the sign-in
 * with exit 4, said, and no session is left that could only be used without its key. A token store that keeps
 * everything cannot be made to lose part of an entry, so this one store is a stand-in: the real file store, wrapped.
 */
import { describe, expect, it } from 'vitest';
import { AuthError, ExitCode } from '../../../../src/errors.js';
import { login } from '../../../../src/session/login/login.js';
import type { StoredSession, TokenStore } from '../../../../src/store/types.js';
import { AUTHORIZE_URL } from '../../../helpers/consent.js';
import { useTestContexts } from '../../../helpers/context.js';
import { useHome, usePlatform } from '../../../helpers/platform.js';

const platform = usePlatform({ dpop: true });
const home = useHome();
const open = useTestContexts(home);

/** The file store, but one that keeps everything except the DPoP key. */
function forgetful(store: TokenStore): TokenStore {
  return Object.assign(Object.create(store) as TokenStore, {
    set: (profile: string, session: StoredSession) => {
      const { dpopKey: _dropped, ...rest } = session;
      return store.set(profile, rest);
    },
  });
}

describe('a token store that cannot hold the key', () => {
  it('fails the sign-in with exit 4, names what to do, and leaves no session', async () => {
    const { ctx, stderr } = open({ env: { PLAT_BASE_URL: platform.baseUrl } });
    const tokenStore = ctx.tokenStore.bind(ctx);
    ctx.tokenStore = async (...args) => forgetful(await tokenStore(...args));
    const signingIn = login(ctx, { browser: false, client: { kind: 'auto' }, timeoutSeconds: 30, scope: ['courses:read'] }).catch((e: unknown) => e);
    // The browser elsewhere: the address plat prints is approved at the platform, and the callback delivered.
    const authorizeUrl = await new Promise<string>((resolve) => {
      const look = () => {
        const found = AUTHORIZE_URL.exec(stderr())?.[1];
        if (found) resolve(found);
        else setTimeout(look, 10);
      };
      look();
    });
    await fetch(await platform.approve(authorizeUrl));
    const error = await signingIn;
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(ExitCode.auth);
    expect((error as Error).message).toMatch(/did not keep the DPoP key of the new session, so plat stored no session/);
    expect((error as Error).message).toMatch(/--no-dpop/);
    expect(await (await tokenStore('file')).get('default')).toBeUndefined();
  });
});
