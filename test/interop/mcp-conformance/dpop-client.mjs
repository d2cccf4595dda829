#!/usr/bin/env node
// The client command for @modelcontextprotocol/conformance's auth/dpop and auth/dpop-nonce scenarios:
// `node dpop-client.mjs <mcp-server-url>`, run by the suite. It does what a person does with the built plat, in
// a throwaway config dir and the 0600 file store: `plat login --base-url <url>` with a browser stand-in (this same
// file with --browser, which follows the authorization server's redirects to plat's callback as a browser would
// after consent), then `plat call POST <url>` with the MCP initialize request and the initialized notification,
// then `plat logout`. Prints plat's output on stderr for the suite's record; exits non-zero if a step fails.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const plat = path.resolve(path.dirname(self), '../../../bin/plat.js');

if (process.argv[2] === '--browser') {
  // The browser: plat appends the authorization URL. The suite's authorization server approves without a page and
  // redirects to the callback; fetch follows every redirect to it, as a browser would.
  const response = await fetch(process.argv[3]);
  await response.text();
  process.stderr.write(`dpop-client browser: landed on ${new URL(response.url).pathname}, HTTP ${response.status}\n`);
  process.exit(response.ok ? 0 : 1);
}

const serverUrl = process.argv[2];
if (!serverUrl) {
  process.stderr.write('usage: dpop-client.mjs <mcp-server-url>\n');
  process.exit(64);
}
const home = mkdtempSync(path.join(os.tmpdir(), 'plat-dpop-conformance-'));
const env = {
  PATH: process.env.PATH ?? '',
  HOME: home,
  PLAT_CONFIG_DIR: path.join(home, 'config'),
  PLAT_TOKEN_STORE: 'file',
  PLAT_BROWSER: `"${process.execPath}" "${self}" --browser`,
  NO_COLOR: '1',
};
const accept = 'Accept: application/json, text/event-stream';
const protocolVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION || '2025-11-25';

function run(args) {
  const result = spawnSync(process.execPath, [plat, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  process.stderr.write(`$ plat ${args.join(' ')}\n${result.stdout}${result.stderr}`);
  if (result.status !== 0) {
    process.stderr.write(`dpop-client: plat ${args[0]} exited ${result.status ?? result.signal}\n`);
    rmSync(home, { recursive: true, force: true });
    process.exit(1);
  }
  return result.stdout;
}

try {
  run(['login', '--base-url', serverUrl]);
  // Bodies from files, as a person scripting this would: plat can send a file again (after a use_dpop_nonce
  // challenge, RFC 9449 §9), where a body read from stdin is gone once sent.
  const body = (name, message) => {
    const file = path.join(home, `${name}.json`);
    writeFileSync(file, JSON.stringify({ jsonrpc: '2.0', ...message }));
    return file;
  };
  const initialize = body('initialize', { id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'plat', version: '0.1.0' } } });
  run(['call', 'POST', serverUrl, '-H', accept, '--input', initialize]);
  const initialized = body('initialized', { method: 'notifications/initialized' });
  run(['call', 'POST', serverUrl, '-H', accept, '-H', `MCP-Protocol-Version: ${protocolVersion}`, '--input', initialized]);
  run(['logout']);
} finally {
  rmSync(home, { recursive: true, force: true });
}
