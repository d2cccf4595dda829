/**
 * The MCP conformance suite's DPoP client scenarios (@modelcontextprotocol/conformance, auth/dpop and
 * auth/dpop-nonce): the suite starts its own authorization server (DPoP-capable, ES256; in auth/dpop-nonce it
 * answers the first proof at the token endpoint with use_dpop_nonce) and an MCP server whose resource-side judge
 * checks every request's Authorization scheme and proof (typ, alg, jwk, htm, htu, iat, ath, cnf.jkt, a fresh
 * jti; in auth/dpop-nonce a use_dpop_nonce challenge first). It runs test/interop/mcp-conformance/dpop-client.mjs
 * with the MCP server's URL, which uses the built plat as a person does: plat login with a browser stand-in, plat
 * call with the MCP initialize request and notification, plat logout. The verdict is the suite's own: its exit
 * code and every check in its checks.json.
 *
 * On Node 20 the suite needs fs.globSync (Node 22), which mcp-conformance/register.mjs serves it, as for
 * mcp-conformance.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { scaled } from '../helpers/time.js';

const conformance = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const client = path.join(repoRoot, 'test', 'interop', 'mcp-conformance', 'dpop-client.mjs');
const register = path.join(repoRoot, 'test', 'interop', 'mcp-conformance', 'register.mjs');

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs one client scenario; returns the suite's exit code, its checks, and what it printed (for a failure's message). */
async function runScenario(scenario: string): Promise<{ code: number | null; checks: Check[]; output: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-conformance-dpop-'));
  try {
    const timeoutMs = scaled(60_000);
    const child = spawn(
      process.execPath,
      ['--import', register, conformance, 'client', '--command', `"${process.execPath}" "${client}"`, '--scenario', scenario, '--timeout', String(timeoutMs), '-o', dir],
      {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // -o <dir> keeps <dir>/<scenario>-<time>/checks.json (and the client's stdout and stderr beside it).
    const [group, name] = scenario.split('/') as [string, string];
    const run = (await readdir(path.join(dir, group)).catch(() => [] as string[])).find((entry) => entry.startsWith(`${name}-2`));
    const checks: Check[] = run ? JSON.parse(await readFile(path.join(dir, group, run, 'checks.json'), 'utf8')) : [];
    const clientStderr = run ? await readFile(path.join(dir, group, run, 'stderr.txt'), 'utf8').catch(() => '') : '';
    return { code, checks, output: `${output}\n--- client stderr ---\n${clientStderr}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const DPOP_CHECKS = ['sep-1932-client-token-request-proof', 'sep-1932-client-dpop-auth-scheme', 'sep-1932-client-fresh-proof'];
const NONCE_CHECKS = ['sep-1932-client-as-nonce', 'sep-1932-client-rs-nonce'];

describe('MCP conformance suite, DPoP client scenarios, with plat as a person uses it', () => {
  it.each([
    ['auth/dpop', DPOP_CHECKS],
    ['auth/dpop-nonce', [...DPOP_CHECKS, ...NONCE_CHECKS]],
  ])('%s: the suite passes plat (every check, the DPoP ones among them)', async (scenario, expected) => {
    const { code, checks, output } = await runScenario(scenario);
    const failed = checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    expect(failed, output).toEqual([]);
    expect(code, output).toBe(0);
    for (const id of expected) expect(checks.find((check) => check.id === id)?.status, `${id}\n${output}`).toBe('SUCCESS');
  }, scaled(120_000));
});
