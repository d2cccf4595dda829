/**
 * Loads `plat mcp` (mcp.ts, its tools and the MCP SDK) for that command alone. In dist/main.cjs it is a bundle of
 * its own beside it, dist/mcp.cjs (PLAT_MCP_BUNDLE names it; src/build/build.mjs builds it), so no other start
 * reads, parses or keeps a code cache of ~350 KB it never runs. That bundle leaves plat's own modules out: each
 * import of one reads it from mainModules() below, dist/main.cjs's own copy, so the two share one copy of each (one
 * PlatError class for main.ts to map).
 *
 * Named bindings, not module namespaces: a namespace handed over would make esbuild build it at every start of
 * dist/main.cjs. The build fails when dist/mcp.cjs imports a module not listed here, and test/cli/startup.test.ts
 * when it uses a name a listed module does not hand over. In the tests and the TypeScript sources it is a plain
 * import.
 */
import { getFullApiIndex } from '../catalogue/fetch-openapi.js';
import { API_TTL_MS, isPublicOperation, missingScopes, OPENAPI_PATH } from '../catalogue/openapi.js';
import { AuthError, NetworkError, PlatError, UsageError } from '../errors.js';
import { bodyReadError } from '../http/body-error.js';
import { readBodyUpTo } from '../http/read-body.js';
import { parsePositiveInt } from '../requests/values.js';
import { governRequests } from '../batch/index.js';
import {
  currentProfile,
  heldScopes,
  identify,
  openClient,
  platformOf,
  readPages,
  responseFailure,
  responseHeader,
  suggest,
} from '../session/index.js';
import { didYouMean, sanitize } from '../terminal/text.js';
import { apiRequestOf } from '../requests/api-request.js';
import { buildRawRequest, givenParams, opRequest, problemPhrase } from '../requests/request-object.js';
import { MAX_NESTING, nestsDeeperThan, tooDeep } from '../requests/depth.js';

declare const PLAT_MCP_BUNDLE: string | undefined;

export type McpCommand = typeof import('./server.js');

export async function loadMcpCommand(): Promise<McpCommand> {
  if (typeof PLAT_MCP_BUNDLE !== 'string') return import('./server.js');
  (globalThis as { __platMain?: Record<string, Record<string, unknown>> }).__platMain = mainModules();
  return require(`${__dirname}/${PLAT_MCP_BUNDLE}`) as McpCommand;
}

/** What dist/mcp.cjs uses of dist/main.cjs's modules, keyed by each module's path from the repository's root. */
export function mainModules(): Record<string, Record<string, unknown>> {
  return {
    'src/catalogue/fetch-openapi.ts': { getFullApiIndex },
    'src/catalogue/openapi.ts': { API_TTL_MS, isPublicOperation, missingScopes, OPENAPI_PATH },
    'src/errors.ts': { AuthError, NetworkError, PlatError, UsageError },
    'src/batch/index.ts': { governRequests },
    'src/http/body-error.ts': { bodyReadError },
    'src/http/read-body.ts': { readBodyUpTo },
    'src/session/index.ts': { currentProfile, heldScopes, identify, openClient, platformOf, readPages, responseFailure, responseHeader, suggest },
    'src/terminal/text.ts': { didYouMean, sanitize },
    'src/requests/api-request.ts': { apiRequestOf },
    'src/requests/request-object.ts': { buildRawRequest, givenParams, opRequest, problemPhrase },
    'src/requests/values.ts': { parsePositiveInt },
    'src/requests/depth.ts': { MAX_NESTING, nestsDeeperThan, tooDeep },
  };
}
