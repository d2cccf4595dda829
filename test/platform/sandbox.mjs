#!/usr/bin/env node
// `node test/platform/sandbox.mjs [--port N] [--access-token-ttl S] [--dpop]`: runs the reference platform until
// SIGINT/SIGTERM. The first stdout line always carries the base URL (scripts parse it).

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { startPlatform } from './index.mjs';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'access-token-ttl': { type: 'string' },
    // DPoP (RFC 9449) on: logins there are bound to a key (plat help security).
    dpop: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  process.stdout.write('usage: node test/platform/sandbox.mjs [--port N] [--access-token-ttl SECONDS] [--dpop]\n');
  process.exit(0);
}

/** @param {string | undefined} value @param {string} name */
function nonNegativeInt(value, name) {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) {
    process.stderr.write(`sandbox: --${name} must be a non-negative integer\n`);
    process.exit(64);
  }
  return Number(value);
}

const port = nonNegativeInt(values.port, 'port');
const accessTokenTtl = nonNegativeInt(values['access-token-ttl'], 'access-token-ttl');

const platform = await startPlatform({
  ...(port !== undefined ? { port } : {}),
  ...(accessTokenTtl ? { accessTokenTtl } : {}),
  ...(values.dpop ? { dpop: true } : {}),
});

// `plat` is on PATH only after `npm link` (or a global install): print the form that works from this checkout as
// it is, and the short one for after npm link.
const bin = path.relative(process.cwd(), fileURLToPath(new URL('../../bin/plat.js', import.meta.url))) || 'bin/plat.js';
const quoted = /^[\w./-]+$/.test(bin) ? bin : `'${bin.replace(/'/g, `'\\''`)}'`;
const lines = [
  `Sandbox platform: ${platform.baseUrl}`,
  `Log in with: node ${quoted} login --base-url ${platform.baseUrl}`,
  `  (or run npm link once, then: plat login --base-url ${platform.baseUrl})`,
  `Demo user: Ada Lovelace (consent page, no password). Pre-registered clients: ${platform.preRegistered.publicClientId}, ${platform.preRegistered.confidentialClientId}`,
  process.stdout.isTTY ? 'Press Ctrl+C to stop.' : '',
].filter(Boolean);
// One write, so a parent reading our piped stdout sees the URL line in the first chunk.
process.stdout.write(`${lines.join('\n')}\n`);

let stopping = false;
/** @param {NodeJS.Signals} signal */
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  await platform.close();
  process.stderr.write(`sandbox: stopped (${signal})\n`);
  process.exit(0);
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
