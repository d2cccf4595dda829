/**
 * `plat call` streams: a gigabyte goes through byte for byte with flat memory. Peak RSS is read from /proc (VmHWM)
 * while the process runs and recorded under test-output/. The bound is the benchmark's target (test/bench/README.md: 64 MiB, the
 * same for 64 MiB as for 1 GiB): without the forced minor GCs of src/terminal/stream-out.ts Node peaks at 86–89 MiB, so this
 * fails if that trick silently stops working. Memory, unlike time, barely depends on the machine's load.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, platBin, repoRoot, type Home } from '../helpers/cli.js';
import { usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';
import { definedEnv } from '../helpers/env.js';

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

const PATTERN_SPAN = 64 * 1024;
/** 0, 1, …, 255, 0, 1, … long enough to hold any slice of PATTERN_SPAN bytes at any phase. */
const PATTERN = Buffer.from(Array.from({ length: PATTERN_SPAN + 256 }, (_, k) => k % 256));

async function download(bytes: number): Promise<{ code: number | null; received: number; peakKiB: number; checksumOk: boolean }> {
  const env = definedEnv(home.env) as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [platBin, 'call', 'GET', `/api/download?bytes=${bytes}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let received = 0;
  let checksumOk = true;
  child.stdout.on('data', (chunk: Buffer) => {
    // byte k of the download is k % 256: compare every byte, a pattern-sized slice at a time
    for (let at = 0; at < chunk.length; at += PATTERN_SPAN) {
      const part = chunk.subarray(at, at + PATTERN_SPAN);
      const phase = (received + at) % 256;
      if (!part.equals(PATTERN.subarray(phase, phase + part.length))) checksumOk = false;
    }
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
  it('downloads 1 GiB to stdout byte for byte in at most 64 MiB, as flat as 64 MiB', async () => {
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
    expect(small.checksumOk).toBe(true);
    expect(small.received).toBe(64 * 1024 * 1024);
    // At most 64 MiB, and flat: the gigabyte costs no more than the 64 MiB run (4 MiB of slack for noise).
    expect(small.peakKiB).toBeLessThanOrEqual(64 * 1024);
    expect(large.peakKiB).toBeLessThanOrEqual(64 * 1024);
    expect(large.peakKiB).toBeLessThanOrEqual(small.peakKiB + 4 * 1024);
  }, scaled(120_000));
});

describe('plat call collects a large body\'s spent buffers', () => {
  it('when they hold memory, not after every MiB: fewer than one forced GC per 2 MiB of a 64 MiB download', async () => {
    // --trace-gc prints each collection, a forced one with the reason "testing", on stdout among the body's bytes
    // (a pattern of 0-255 in order, which never spells it). The previous pacing forced one every MiB: 64 here.
    const env = definedEnv(home.env) as NodeJS.ProcessEnv;
    const child = spawn(process.execPath, ['--trace-gc', platBin, 'call', 'GET', `/api/download?bytes=${64 * 1024 * 1024}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let forced = 0;
    let tail = '';
    child.stdout.setEncoding('latin1');
    child.stdout.on('data', (text: string) => {
      const seen = tail + text;
      forced += seen.split('testing;').length - 1;
      tail = seen.slice(-16).includes('testing;') ? '' : seen.slice(-16);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(forced).toBeGreaterThan(0);
    expect(forced).toBeLessThan(32);
  }, scaled(60_000));
});
