/**
 * Loads the MCP SDK (mcp-sdk.ts) for `plat mcp` alone. In dist/main.cjs it is a file of its own beside the bundle,
 * required on use (PLAT_MCP_SDK_FILE names it; src/build/build.mjs defines it), so no other start reads it; in the
 * tests and the TypeScript sources it is a plain import.
 */
declare const PLAT_MCP_SDK_FILE: string | undefined;

export type McpSdk = typeof import('./mcp-sdk.js');

export function loadMcpSdk(): Promise<McpSdk> {
  return typeof PLAT_MCP_SDK_FILE === 'string'
    ? Promise.resolve(require(`${__dirname}/${PLAT_MCP_SDK_FILE}`) as McpSdk)
    : import('./mcp-sdk.js');
}
