#!/usr/bin/env node
/**
 * The MCP conformance suite's client command (test/interop/mcp-conformance.test.ts): a person using the built plat
 * against the scenario's server, whose URL is the last argument. `plat login --no-browser --base-url <URL>` with a
 * browser stand-in that opens the address plat prints and follows the server's redirects to plat's loopback; then
 * the MCP calls with `plat call POST <URL>` (initialize, notifications/initialized, tools/list, then tools/call of
 * the first tool, or tools/list again). When plat
 * says to sign in ("Run: plat login …"), the person runs exactly that login and the call once more. A login that
 * fails is left as a person leaves it: the calls that follow say what to do.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const serverUrl = process.argv.at(-1);
const plat = fileURLToPath(new URL('../../../bin/plat.js', import.meta.url));
const log = (text) => process.stderr.write(`[client] ${text}\n`);

/** plat with these arguments; `onStderr` sees its stderr as it grows; stdin is `input` (or empty). */
function run(args, { input, onStderr } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [plat, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
      onStderr?.(stderr);
    });
    child.stdin.end(input ?? '');
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The browser: opens the authorization address and follows redirects until plat's loopback callback answers. */
async function browse(address) {
  let url = address;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual' });
    await response.text();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return;
    url = new URL(location, url).href;
  }
}

/** `plat login …` (with --no-browser), its consent given by the browser stand-in. */
async function login(args) {
  let opened = false;
  const result = await run([...args, '--no-browser'], {
    onStderr: (stderr) => {
      const address = /(https?:\/\/\S*[?&]code_challenge=\S+)/.exec(stderr)?.[1];
      if (!address || opened) return;
      opened = true;
      browse(address).catch((error) => log(`browser: ${error.message}`));
    },
  });
  log(`${['plat', ...args].join(' ')}: exit ${result.code}${result.code === 0 ? '' : `\n${result.stderr}`}`);
  return result;
}

/** The login plat names in its error ("Run: plat login --base-url …"), as arguments. */
function namedLogin(stderr) {
  const line = /Run: plat (login[^\n]*)/.exec(stderr)?.[1];
  if (!line) return undefined;
  return line
    .replace(/\.$/, '')
    .split(/\s+/)
    .map((word) => word.replace(/^'(.*)'$/, '$1'));
}

const protocolVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '2025-06-18';
let sessionId;
let nextId = 1;

/** One JSON-RPC message with plat call; on "Run: plat login …", that login and the call again (once). */
async function rpc(method, params, { notification = false } = {}) {
  const message = { jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), ...(notification ? {} : { id: nextId++ }) };
  const args = ['call', 'POST', serverUrl, '-i', '--input', '-', '-H', 'Accept: application/json, text/event-stream', '-H', `MCP-Protocol-Version: ${protocolVersion}`];
  for (let attempt = 0; ; attempt++) {
    const headers = sessionId ? ['-H', `Mcp-Session-Id: ${sessionId}`] : [];
    const result = await run([...args, ...headers], { input: JSON.stringify(message) });
    const again = result.code !== 0 && attempt === 0 ? namedLogin(result.stderr) : undefined;
    if (again) {
      log(`${method}: exit ${result.code}; plat says to run plat ${again.join(' ')}`);
      await login(again);
      continue;
    }
    log(`${method}: exit ${result.code}${result.code === 0 ? '' : `\n${result.stderr}`}`);
    return answerOf(result.stdout);
  }
}

/** The status line and headers plat call -i printed, then the body: JSON, or the data of an event stream. */
function answerOf(stdout) {
  const [head = '', ...rest] = stdout.split(/\r?\n\r?\n/);
  const id = /^mcp-session-id:\s*(\S+)/im.exec(head)?.[1];
  if (id) sessionId = id;
  const body = rest.join('\n\n');
  const data = [...body.matchAll(/^data:\s?(.*)$/gm)].map((m) => m[1]).join('\n');
  try {
    return JSON.parse(data || body);
  } catch {
    return undefined;
  }
}

await login(['login', '--base-url', serverUrl]);
await rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'plat-conformance-client', version: '1.0.0' } });
await rpc('notifications/initialized', undefined, { notification: true });
const listed = await rpc('tools/list', {});
const tool = listed?.result?.tools?.[0];
// A second request as well: a server may change its mind between two (authorization-server-migration does).
if (tool) await rpc('tools/call', { name: tool.name, arguments: {} });
else await rpc('tools/list', {});
