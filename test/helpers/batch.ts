/**
 * plat batch's test parts: a ledger on the reference platform that counts each student it is asked to enrol (as a
 * real API creates a record per POST; a request whose Idempotency-Key it has seen gets the first answer again and
 * counts nothing), and plat batch as its own process that the ledger can SIGKILL at the n-th request.
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Platform } from '../platform/index.mjs';
import { platBin, type Home, type PlatResult } from './cli.js';
import { definedEnv } from './env.js';

export interface Ledger {
  /** Students created, and how many times each. */
  counts: Map<number, number>;
  /** Idempotency-Keys received, and how many times each. */
  keySeen: Map<string, number>;
  /** Requests received. */
  total(): number;
}

/** `onArrival` lets a test act at the n-th request; `refuse` answers 422 (nothing created) for some students. */
export function ledger(platform: Platform, options: { onArrival?: (total: number) => void; refuse?: (student: number) => boolean } = {}): Ledger {
  const counts = new Map<number, number>();
  const keys = new Map<string, string>();
  const keySeen = new Map<string, number>();
  let total = 0;
  platform.override('/api/ledger', async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    total++;
    options.onArrival?.(total);
    const key = req.headers['idempotency-key'] as string | undefined;
    if (key) keySeen.set(key, (keySeen.get(key) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 20));
    if (key && keys.has(key)) {
      res.writeHead(201, { 'content-type': 'application/json' }).end(keys.get(key));
      return true;
    }
    const { student } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { student: number };
    if (options.refuse?.(student)) {
      res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `student ${student} is not valid` }));
      return true;
    }
    counts.set(student, (counts.get(student) ?? 0) + 1);
    const answer = JSON.stringify({ enrolled: student });
    if (key) keys.set(key, answer);
    res.writeHead(201, { 'content-type': 'application/json' }).end(answer);
    return true;
  });
  return { counts, keySeen, total: () => total };
}

/** plat batch as its own process; `book.onKill` sends it `signal` (the ledger calls it at the chosen request). */
export function runUntilKilled(home: Home, args: string[], book: { onKill?: () => void }, signal: NodeJS.Signals = 'SIGKILL') {
  const env = definedEnv(home.env) as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [platBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  book.onKill = () => child.kill(signal);
  return new Promise<PlatResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

export const ndjson = (lines: unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

export interface Result {
  id: string | number;
  line: number;
  status: number | null;
  ok: boolean;
  body?: any;
  error?: string;
}

export const results = (result: { stdout: string }) =>
  result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Result);
