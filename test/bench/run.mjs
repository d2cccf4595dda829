// `npm run bench`: start-up and streaming figures of plat, measured side by side on this machine.
// Starts the reference platform, logs in once, then for each row runs the two commands interleaved (A B A B …)
// after a warm-up and reports the median of the pairwise time ratios (robust on noisy machines), plus peak RSS
// and throughput of large downloads, and paging through 1,000 pages (pages.mjs). Prints a table and writes
// test/bench/results.json.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPlatform } from '../platform/index.mjs';
import { benchPagination } from './pages.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const plat = path.join(root, 'bin', 'plat.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 5;
const quick = process.argv.includes('--quick');

const platform = await startPlatform();
const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-bench-'));
const env = { ...process.env, PLAT_CONFIG_DIR: path.join(dir, 'config'), PLAT_TOKEN_STORE: process.env.PLAT_TOKEN_STORE ?? 'file' };
for (const key of ['PLAT_TOKEN', 'PLAT_BASE_URL', 'PLAT_PROFILE', 'PLAT_DEBUG']) delete env[key];

const results = { date: new Date().toISOString(), machine: machine(), node: process.version, tokenStore: env.PLAT_TOKEN_STORE, rows: [] };
try {
  await login();
  const token = (await capture(process.execPath, [plat, 'token'])).trim();
  const url = `${platform.baseUrl}/api/courses`;
  const nodeBare = [process.execPath, '-e', '0'];

  row('plat --version / node -e 0', 1.1, '≤', await ratio([process.execPath, plat, '--version'], nodeBare));
  row('plat call GET /api/courses / node -e 0', 1.25, '≤', await ratio([process.execPath, plat, 'call', 'GET', '/api/courses'], nodeBare));
  const http = which('http');
  if (http) {
    row('plat call / HTTPie', 0.5, '≤', await ratio([process.execPath, plat, 'call', 'GET', '/api/courses'], [http, '--ignore-stdin', '--body', 'GET', url, `Authorization:Bearer ${token}`]));
  } else {
    results.rows.push({ figure: 'plat call / HTTPie', target: '≤ 0.5', measured: null, note: 'httpie not installed (apt-get install -y httpie)' });
  }
  row('plat whoami / node -e 0', 1.25, '≤', await ratio([process.execPath, plat, 'whoami'], nodeBare));
  // The floor: Node itself making the same request and printing the body, with nothing of plat's.
  const rawGet = `require('http').get(${JSON.stringify(url)},{headers:{authorization:${JSON.stringify(`Bearer ${token}`)}}},r=>r.pipe(process.stdout))`;
  results.rows.push(reference('floor: node http.get → stdout / node -e 0', await ratio([process.execPath, '-e', rawGet], nodeBare)));

  const sizes = quick ? [64, 256] : [64, 256, 1024];
  const downloads = [];
  for (const mib of sizes) downloads.push(await download(mib, token));
  for (const d of downloads) {
    results.rows.push({
      figure: `${d.mib} MiB through plat call > /dev/null: peak RSS`,
      target: '≤ 80 MiB',
      measured: `${d.peakMiB.toFixed(1)} MiB`,
      ok: d.peakMiB <= 80,
      detail: `${(d.mib / d.platMiBs).toFixed(2)} s, ${d.platMiBs.toFixed(0)} MiB/s`,
    });
  }
  const big = downloads.at(-1);
  const floor = await download(big.mib, token, true);
  results.rows.push({ figure: `floor: ${big.mib} MiB through node's own http.get().pipe(stdout): peak RSS, speed / curl's`, target: '-', measured: `${floor.peakMiB.toFixed(1)} MiB, ${(floor.platMiBs / floor.curlMiBs).toFixed(2)}` });
  results.rows.push({ figure: `${big.mib} MiB download speed / curl's`, target: '≥ 0.5', measured: (big.platMiBs / big.curlMiBs).toFixed(2), ok: big.platMiBs / big.curlMiBs >= 0.5, detail: `plat ${big.platMiBs.toFixed(0)} MiB/s, curl ${big.curlMiBs.toFixed(0)} MiB/s` });
  results.downloads = downloads;

  results.pagination = await benchPagination({ platform, plat, env, token, measure, median, rows: results.rows, runs: quick ? 3 : undefined });

  platform.stats.reset();
  await login();
  const metadataOrRegistration = ['GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-authorization-server', 'GET /.well-known/openid-configuration', 'register'].reduce((n, k) => n + platform.stats.count(k), 0);
  results.rows.push({ figure: 'second plat login: metadata or registration requests', target: '0', measured: String(metadataOrRegistration), ok: metadataOrRegistration === 0, detail: `authorize ${platform.stats.count('GET /oauth/authorize')}, token ${platform.stats.count('token:authorization_code')}` });
} finally {
  await platform.close();
  await rm(dir, { recursive: true, force: true });
}

printTable();
await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);

function reference(figure, r) {
  return { figure, target: '-', measured: r.median.toFixed(2), detail: `A ${r.aMs.toFixed(1)} ms, B ${r.bMs.toFixed(1)} ms (medians of ${RUNS})` };
}

function row(figure, target, op, r) {
  results.rows.push({ figure, target: `${op} ${target}`, measured: r.median.toFixed(2), ok: op === '≤' ? r.median <= target : r.median >= target, detail: `A ${r.aMs.toFixed(1)} ms, B ${r.bMs.toFixed(1)} ms (medians of ${RUNS})` });
}

/** Interleaved A/B runs; the median of the per-pair ratios A/B, and each side's median time. */
// Async spawns: the platform runs in this process and must keep serving while a command runs.
async function ratio(a, b) {
  const time = (argv) =>
    new Promise((resolve, reject) => {
      const start = process.hrtime.bigint();
      const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => {
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        if (code !== 0) reject(new Error(`${argv.join(' ')} exited ${code}: ${err}`));
        else resolve(ms);
      });
    });
  for (let i = 0; i < WARMUP; i++) {
    await time(a);
    await time(b);
  }
  const ratios = [];
  const as = [];
  const bs = [];
  for (let i = 0; i < RUNS; i++) {
    const ta = await time(a);
    const tb = await time(b);
    as.push(ta);
    bs.push(tb);
    ratios.push(ta / tb);
  }
  return { median: median(ratios), aMs: median(as), bMs: median(bs) };
}

/** plat (or, for the floor, Node's bare http client) against curl on the same download. */
async function download(mib, token, bareNode = false) {
  const bytes = mib * 1024 * 1024;
  const url = `${platform.baseUrl}/api/download?bytes=${bytes}`;
  const platRun = bareNode
    ? await measure(process.execPath, ['-e', `require('http').get(${JSON.stringify(url)},r=>r.pipe(process.stdout))`])
    : await measure(process.execPath, [plat, 'call', 'GET', `/api/download?bytes=${bytes}`]);
  const curlRun = await measure('curl', ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${token}`, url]);
  return {
    mib,
    peakMiB: platRun.peakKiB / 1024,
    platMiBs: mib / (platRun.ms / 1000),
    curlMiBs: mib / (curlRun.ms / 1000),
  };
}

/** Runs a command with stdout to /dev/null, polling /proc for its peak RSS (VmHWM only grows). */
function measure(file, args) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(file, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let peakKiB = 0;
    const poll = setInterval(async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
      const m = /VmHWM:\s+(\d+) kB/.exec(status);
      if (m) peakKiB = Math.max(peakKiB, Number(m[1]));
    }, 20);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      if (code !== 0) reject(new Error(`${file} exited ${code}`));
      else resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, peakKiB });
    });
  });
}

async function login() {
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [plat, 'login', '--no-browser', '--base-url', platform.baseUrl, '--scope', 'courses:read'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    let started = false;
    child.stderr.on('data', (d) => {
      err += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(err);
      if (m && !started) {
        started = true;
        platform.approve(m[1]).then((cb) => fetch(cb)).catch(reject);
      }
    });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`login failed: ${err}`))));
  });
}

function capture(file, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} exited ${code}`))));
  });
}

function median(values) {
  const s = [...values].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function machine() {
  return `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}`;
}

function printTable() {
  console.log(`plat benchmark — ${results.date.slice(0, 10)} — ${results.machine} — Node ${results.node}\n`);
  console.log('| figure | target | measured | met |');
  console.log('| --- | --- | --- | --- |');
  for (const r of results.rows) console.log(`| ${r.figure} | ${r.target} | ${r.measured ?? 'n/a'}${r.detail ? ` (${r.detail})` : ''} | ${r.ok === undefined ? '-' : r.ok ? 'yes' : 'no'} |`);
}
