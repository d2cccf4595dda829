/**
 * Independent authorization servers for the interop suite: each is a real implementation (from Debian or npm),
 * started by the test itself on 127.0.0.1 as a child process that prints `{"port": N, ...}` when it listens.
 * `state()` reads the server's own records (registrations, tokens and whether they are revoked) through a test-only
 * route, so a test can see rotation and revocation where they happen, not only what plat says about them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCI } from '../helpers/components.js';
import { scaled } from '../helpers/time.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PYTHON = '/usr/bin/python3';

export interface InteropServer {
  /** The API origin (plat's --base-url); its RFC 9728 document names the issuer. */
  baseUrl: string;
  /** The issuer: as the ready line names it, else on the API's origin under the issuer path. */
  issuer: string;
  state(): Promise<Record<string, any>>;
  /** What the server wrote on stderr: for a failing test's message. */
  log(): string;
  close(): Promise<void>;
}

/** Whether Debian's python3 can import these modules; in CI a missing one fails the test instead of skipping it. */
export function pythonHas(modules: string[]): boolean {
  try {
    accessSync(PYTHON, constants.X_OK);
  } catch {
    return false;
  }
  return spawnSync(PYTHON, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' }).status === 0;
}

/** In CI (where nothing is skipped) a missing server fails its tests with the install command, not a spawn error. */
export function requireInstalled(available: boolean, install: string): void {
  if (!available) throw new Error(`This test needs an authorization server that is not installed here; install with: ${install}`);
}

export function skipUnless(available: boolean, install: string): boolean {
  if (available) return false;
  if (isCI) return false; // CI skips nothing: the tests run and fail, saying what is missing
  console.warn(`interop: skipped, install with: ${install}`);
  return true;
}

/** A server's ready line: the API origin's `port`, and `issuer` when the issuer is not on that origin's issuer path. */
interface ReadyLine {
  port: number;
  issuer?: string;
}

interface StartOptions {
  /** The issuer's path on the API origin, for a server whose ready line names no issuer. */
  issuerPath?: string;
  env?: Record<string, string>;
}

/**
 * Starts any child process that serves on 127.0.0.1 and prints one JSON line `{"port": N, ...}` on stdout when it
 * listens (Python or Node alike), and waits for that line. `issuer` on the line wins over `issuerPath`.
 */
async function startServer(command: string, args: string[], options: StartOptions = {}): Promise<InteropServer> {
  const name = path.relative(here, args[0] ?? command);
  const child = spawn(command, args, {
    // stdin stays open: the server exits when it closes, so a test runner that dies leaves no server behind.
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const ready = await new Promise<ReadyLine>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      void stop(child);
      reject(new Error(`${name} did not start within ${scaled(20_000) / 1000} s:\n${stderr}`));
    }, scaled(20_000));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const line = /^(\{"port": ?\d+.*\})$/m.exec(stdout);
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line[1]!) as ReadyLine);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before listening:\n${stderr}`));
    });
  });
  const baseUrl = `http://127.0.0.1:${ready.port}`;
  return {
    baseUrl,
    issuer: ready.issuer ?? `${baseUrl}${options.issuerPath ?? ''}`,
    async state() {
      const response = await fetch(`${baseUrl}/_test/state`);
      if (!response.ok) throw new Error(`state: HTTP ${response.status}`);
      return (await response.json()) as Record<string, any>;
    },
    log: () => stderr,
    close: () => stop(child),
  };
}

/** Starts `script` (relative to test/interop) with Debian's python3. */
export function startPythonServer(script: string, options: Record<string, unknown>, issuerPath: string, env: Record<string, string> = {}): Promise<InteropServer> {
  return startServer(PYTHON, [path.join(here, script), JSON.stringify(options)], { issuerPath, env: { PYTHONDONTWRITEBYTECODE: '1', ...env } });
}

/** Starts `script` (relative to test/interop) with the Node that runs the tests. */
export function startNodeServer(script: string, options: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<InteropServer> {
  return startServer(process.execPath, [path.join(here, script), JSON.stringify(options)], { env });
}

/**
 * A loopback port free at this moment, for a client whose redirect URI a server must know in advance (servers
 * that compare it exactly). Far less likely to be taken than a fixed port another process may hold.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** SIGTERM, then SIGKILL after 3 s: a test server never outlives its test. */
export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}
