/**
 * Loads dist/refresh.cjs for a plain bundle (dist/plain-<command>.cjs), the first time one of its modules is asked
 * for: what a plain start with a fresh bearer token never runs, the token endpoint's path (oauth/tokens.ts,
 * oauth/discovery.ts and oauth4webapi for a refresh; store/lock.ts and proper-lockfile for its lock) and DPoP's proofs
 * (oauth/dpop.ts). In one CommonJS file esbuild keeps what `await import()` reaches, so each plain start read and
 * compiled ~140 KB of them (issue 42). src/build/build.mjs makes each plain bundle's import of those modules a call
 * of refreshModule(), so it runs as esbuild initialises the importer: on the `await import()` that needs it. A
 * bound (DPoP) session loads it on each call; a bearer one only to refresh.
 *
 * That bundle leaves out the plat modules the plain bundle holds: each import of one reads it from plainModules()
 * below, the plain bundle's own copy, so the two share one copy of each (one PlatError class for main.ts to map,
 * one DPoP-Nonce memory). Named bindings, not module namespaces, as in mcp/load.ts. The build fails when
 * dist/refresh.cjs imports a module not listed here, and test/cli/startup.test.ts when it uses a name a listed
 * module does not hand over. dist/main.cjs, the library and the tests import those modules as they are: nothing
 * imports this file but the plain bundles' stand-ins (knip: an entry).
 */
import { AuthError, ExitCode, InterruptedError, PlatError } from '../../errors.js';
import { bodyReadError } from '../../http/body-error.js';
import { isLoopbackHost, isSecureOrLoopback } from '../../oauth/base-url.js';
import { assertSecureEndpoint, MAX_OAUTH_BODY_BYTES, SPEC_PATHS } from '../../oauth/endpoints.js';
import { parseBearerChallenge } from '../../oauth/www-authenticate.js';
import { sleep } from '../../sleep.js';
import { ensurePrivateDir, storageError } from '../../store/atomic.js';
import { lockTargetPath, locksDir } from '../../store/paths.js';
import { sanitize } from '../../terminal/text.js';

/** The bundle's name in dist/, which bin/plat.js loads through its code cache (globalThis.__platLoadBundle). */
const REFRESH_BUNDLE = 'refresh';

let loaded: Record<string, unknown> | undefined;

/** The module `key` (its path from the repository's root) of dist/refresh.cjs, which is loaded the first time. */
export function refreshModule(key: string): unknown {
  if (!loaded) {
    const host = globalThis as { __platPlain?: Record<string, Record<string, unknown>>; __platLoadBundle?: (bundle: string) => { modules: Record<string, unknown> } };
    if (!host.__platLoadBundle) throw new Error(`dist/${REFRESH_BUNDLE}.cjs is loaded by bin/plat.js, which did not start this program`);
    host.__platPlain = plainModules();
    loaded = host.__platLoadBundle(REFRESH_BUNDLE).modules;
  }
  return loaded[key];
}

/** What dist/refresh.cjs uses of a plain bundle's modules, keyed by each module's path from the repository's root. */
export function plainModules(): Record<string, Record<string, unknown>> {
  return {
    'src/errors.ts': { AuthError, ExitCode, InterruptedError, PlatError },
    'src/http/body-error.ts': { bodyReadError },
    'src/oauth/base-url.ts': { isLoopbackHost, isSecureOrLoopback },
    'src/oauth/endpoints.ts': { assertSecureEndpoint, MAX_OAUTH_BODY_BYTES, SPEC_PATHS },
    'src/oauth/www-authenticate.ts': { parseBearerChallenge },
    'src/sleep.ts': { sleep },
    'src/store/atomic.ts': { ensurePrivateDir, storageError },
    'src/store/paths.ts': { lockTargetPath, locksDir },
    'src/terminal/text.ts': { sanitize },
  };
}
