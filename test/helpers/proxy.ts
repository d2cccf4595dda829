/**
 * `plat proxy` as its users run it: started in the background, its one stdout line read, then real curl (or a raw
 * socket, for what curl will not send) against the URL it printed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { platBin, type Home } from './cli.js';
import { definedEnv } from './env.js';

export interface RunningPlatProxy {
  /** What plat printed on stdout (one line of shell assignments). */
  line: string;
  /** PLAT_PROXY_URL, unquoted. */
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Resolves with stderr once the proxy's stderr contains `text` (a request's access-log line, say). */
  stderrContains(text: string): Promise<string>;
  /** Sends `signal` (default SIGINT, Ctrl-C) and resolves with how it ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

const running = new Set<ChildProcess>();

/** Starts `plat proxy …args` and resolves once it printed its address; the test stops it (or stopAllProxies does). */
export function startPlatProxy(home: Home, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<RunningPlatProxy> {
  const fullEnv = definedEnv({ ...home.env, ...env }) as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [platBin, 'proxy', ...args], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ text: string; resolve: (s: string) => void }> = [];
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    for (const w of [...waiters]) {
      if (stderr.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(stderr);
      }
    }
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      const first = stdout === '' || !stdout.includes('\n');
      stdout += d;
      if (first && stdout.includes('\n')) {
        const line = stdout.slice(0, stdout.indexOf('\n'));
        const url = /PLAT_PROXY_URL=('?)([^' ]+)\1/.exec(line)?.[2] ?? '';
        resolve({
          line,
          url,
          child,
          stderr: () => stderr,
          stderrContains: (text) => (stderr.includes(text) ? Promise.resolve(stderr) : new Promise((res) => waiters.push({ text, resolve: res }))),
          stop: (signal = 'SIGINT') => {
            child.kill(signal);
            return ended;
          },
          ended,
        });
      }
    });
    void ended.then((result) => reject(new Error(`plat proxy ended before printing its address (${result.code}):\n${result.stderr}`)));
  });
}

/** For afterEach: no proxy outlives its test. */
export async function stopAllProxies(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

export interface CurlResult {
  /** curl's own exit code (0, or 7 refused, 18 partial body, 52 empty reply, 56 receive failure…). */
  exit: number;
  status: number;
  headers: Record<string, string[]>;
  body: string;
  stderr: string;
}

/** Real curl: `args` go before the URL; the response's status, headers (lower-case names) and body come back. */
export function curl(url: string, args: string[] = []): Promise<CurlResult> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '-i', '--max-time', '30', ...args, url], { encoding: 'latin1', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const exit = error ? Number((error as { code?: number }).code ?? 1) : 0;
      // -i may show several heads (a 100 Continue first): the last one is the response's.
      let rest = stdout;
      let head = '';
      for (;;) {
        const end = rest.indexOf('\r\n\r\n');
        if (end === -1) break;
        head = rest.slice(0, end);
        rest = rest.slice(end + 4);
        if (!/^HTTP\/[\d.]+ 1\d\d/.test(head)) break;
      }
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string[]> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon < 1) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        (headers[name] ??= []).push(line.slice(colon + 1).trim());
      }
      resolve({ exit, status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: rest, stderr });
    });
  });
}

/** The most the proxy has held so far (VmHWM, from /proc), in MiB: read after a large answer or upload. */
export async function proxyPeakMiB(proxy: RunningPlatProxy): Promise<number> {
  return Number(/VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${proxy.child.pid}/status`, 'utf8'))![1]) / 1024;
}
