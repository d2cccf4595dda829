/**
 * `plat call` streams: a gigabyte goes through with flat memory. Peak RSS is read from /proc (VmHWM) while the
 * process runs and recorded under test-output/; the bound is generous so the test is about streaming versus
 * buffering (which would need > 1 GiB), not about a machine's speed.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, platBin, repoRoot, type Home } from '../helpers/cli.js';
import { usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
let home: Home;

beforeAll(async () => {
  home = await makeHome();
  const login = await home.login(platform, ['--scope', 'courses:read']);
  expect(login.code, login.stderr).toBe(0);
});
afterAll(async () => {
  await home.cleanup();
});

async function download(bytes: number): Promise<{ code: number | null; received: number; peakKiB: number; checksumOk: boolean }> {
  const env = Object.fromEntries(Object.entries(home.env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [platBin, 'call', 'GET', `/api/download?bytes=${bytes}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let received = 0;
  let checksumOk = true;
  child.stdout.on('data', (chunk: Buffer) => {
    // byte k of the download is k % 256: spot-check the first byte of every chunk
    if (chunk[0] !== received % 256) checksumOk = false;
    received += chunk.length;
  });
  let peakKiB = 0;
  const poll = setInterval(async () => {
    try {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
      if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
    } catch {
      // the process has exited
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  return { code, received, peakKiB, checksumOk };
}

describe('plat call streams large bodies', () => {
  it('downloads 1 GiB to stdout with flat memory, byte for byte', async () => {
    const small = await download(64 * 1024 * 1024);
    const large = await download(1024 * 1024 * 1024);
    expect(small.code).toBe(0);
    expect(large.code).toBe(0);
    expect(large.received).toBe(1024 * 1024 * 1024);
    expect(large.checksumOk).toBe(true);
    await mkdir(path.join(repoRoot, 'test-output'), { recursive: true });
    await writeFile(
      path.join(repoRoot, 'test-output', 'download-memory.json'),
      JSON.stringify({ peakRssKiB: { '64MiB': small.peakKiB, '1GiB': large.peakKiB } }, null, 2),
    );
    // Buffering would need more than a gigabyte; streaming stays near the 64 MiB run.
    expect(large.peakKiB).toBeLessThan(200 * 1024);
    expect(large.peakKiB).toBeLessThan(small.peakKiB + 64 * 1024);
  }, 120_000);
});
