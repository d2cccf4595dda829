// `npm run bench`'s plat proxy rows against what people use instead, side by side in one run (called by run.mjs;
// `node test/bench/proxy-anchors.mjs [ROUNDS]` after `npm run build` prints the tables alone).
//
// One upstream on loopback that speaks HTTPS, as real platforms do (a self-signed certificate each client is told
// to trust or, for nginx and kubectl, not to check), answering at once: 1 KiB of JSON at /api/courses, N MiB at
// /api/blob?mb=N, 401 without the token. In front of it: curl straight (no hop), nginx (a C proxy: what one extra
// hop costs at best), kubectl proxy (Go's httputil.ReverseProxy: the local credential proxy people already run), a
// bare Node proxy of a dozen lines (no checks: the floor of plat's runtime) and plat proxy (on PLAT_TOKEN, so no
// sign-in). Each request is a curl process of its own, as a script pays it. Figures: the median of curl's
// time_total for one GET over ROUNDS rounds, interleaved round-robin after a warm-up; a 1 GiB download's speed
// (best of 2) and each proxy's peak RSS; RSS after 1,000, 10,000 and 40,000 requests at 64 keep-alive
// connections. An anchor that is not installed (nginx: apt-get install nginx-light; kubectl) is left out.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

const UPSTREAM = `
const fs = require('node:fs');
const token = process.env.TOKEN;
const mib = Buffer.alloc(1 << 20, 97);
const courses = Buffer.from(JSON.stringify(Array.from({ length: 12 }, (_, i) => ({ id: i, title: 'Course ' + i, seats: 30 }))));
require('node:https').createServer({ key: fs.readFileSync(process.env.KEY), cert: fs.readFileSync(process.env.CERT) }, (req, res) => {
  if (req.headers.authorization !== 'Bearer ' + token) { res.writeHead(401, { 'content-type': 'application/json' }); return res.end('{"error":"invalid_token"}'); }
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/api/courses') { res.writeHead(200, { 'content-type': 'application/json', 'content-length': courses.length }); return res.end(courses); }
  if (url.pathname === '/api/blob') {
    let left = Number(url.searchParams.get('mb') || 1);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': left * mib.length });
    const more = () => { while (left > 0) { left--; if (!res.write(mib)) return res.once('drain', more); } res.end(); };
    return more();
  }
  res.writeHead(404); res.end();
}).listen(0, '127.0.0.1', function () { console.log('PORT=' + this.address().port); });`;

const BARE = `
const http = require('node:http'), https = require('node:https');
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
const port = Number(process.env.UP);
http.createServer((req, res) => {
  const headers = { ...req.headers, host: '127.0.0.1:' + port, authorization: 'Bearer ' + process.env.TOKEN };
  const out = https.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers, agent }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
  out.on('error', () => res.destroy());
  req.pipe(out);
}).listen(0, '127.0.0.1', function () { console.log('PORT=' + this.address().port); });`;

/** Adds the rows to `rows` (run.mjs's table); returns the figures per anchor. */
export async function benchProxyAnchors({ plat, rows, rounds = 101, downloadMiB = 1024 }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plat-bench-anchors-'));
  const children = [];
  const pids = [];
  try {
    const token = `anchor-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const start = async (command, args, env, pattern) => {
      const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      return { child, match: await lineOf(child, pattern) };
    };
    writeFileSync(path.join(dir, 'upstream.cjs'), UPSTREAM);
    writeFileSync(path.join(dir, 'bare.cjs'), BARE);
    const upstream = await start(process.execPath, [path.join(dir, 'upstream.cjs')], { TOKEN: token, KEY: key, CERT: cert }, /PORT=(\d+)/);
    const port = Number(upstream.match[1]);
    const base = `https://127.0.0.1:${port}`;
    const targets = [{ name: 'curl straight', url: base, pid: undefined, curlArgs: ['-H', `Authorization: Bearer ${token}`, '--cacert', cert] }];

    const home = path.join(dir, 'home');
    const platEnv = { HOME: home, PLAT_CONFIG_DIR: path.join(home, 'config'), PLAT_TOKEN: token, PLAT_BASE_URL: base, PLAT_TOKEN_STORE: 'file', NO_COLOR: '1', NODE_EXTRA_CA_CERTS: cert };
    const platProxy = await start(process.execPath, [plat, 'proxy'], platEnv, /PLAT_PROXY_URL='?([^'\s]+)/);
    targets.push({ name: 'plat proxy', url: platProxy.match[1].replace(/\/$/, ''), pid: platProxy.child.pid, curlArgs: [] });
    const bare = await start(process.execPath, [path.join(dir, 'bare.cjs')], { TOKEN: token, UP: String(port) }, /PORT=(\d+)/);
    targets.push({ name: 'bare Node proxy', url: `http://127.0.0.1:${bare.match[1]}`, pid: bare.child.pid, curlArgs: [] });
    if (spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0) {
      const kubeconfig = path.join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${base}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: ${token}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n`);
      const kubectl = await start('kubectl', ['proxy', '--port=0', '--kubeconfig', kubeconfig], { HOME: home }, /127\.0\.0\.1:(\d+)/);
      targets.push({ name: 'kubectl proxy', url: `http://127.0.0.1:${kubectl.match[1]}`, pid: kubectl.child.pid, curlArgs: [] });
    }
    if (spawnSync('nginx', ['-v'], { stdio: 'ignore' }).status === 0) {
      const nginxPort = await freePort();
      writeFileSync(
        path.join(dir, 'nginx.conf'),
        `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/nginx.err;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream up { server 127.0.0.1:${port}; keepalive 16; }
  server { listen 127.0.0.1:${nginxPort};
    location / { proxy_pass https://up; proxy_ssl_verify off; proxy_ssl_session_reuse on; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:${port}; proxy_set_header Authorization "Bearer ${token}"; proxy_buffering off; proxy_request_buffering off; } } }`,
      );
      const master = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir], { stdio: 'ignore' });
      children.push(master);
      await waitFor(() => readFileSync(path.join(dir, 'nginx.pid'), 'utf8'));
      const worker = Number(execFileSync('pgrep', ['-P', String(master.pid)]).toString().trim().split('\n')[0]);
      pids.push(worker);
      targets.push({ name: 'nginx', url: `http://127.0.0.1:${nginxPort}`, pid: worker, curlArgs: [] });
    }

    // 1. One GET: warm-up, then ROUNDS rounds, each target once per round.
    for (const t of targets) {
      t.totals = [];
      t.failures = 0;
      for (let i = 0; i < 20; i++) curlOnce(`${t.url}/api/courses`, t.curlArgs);
    }
    for (let i = 0; i < rounds; i++) {
      for (const t of targets) {
        const r = curlOnce(`${t.url}/api/courses`, t.curlArgs);
        if (r.code !== '200') t.failures++;
        t.totals.push(r.totalMs);
      }
    }
    // 2. The download, best of two; each proxy's peak RSS after it.
    for (const t of targets) {
      t.mibs = 0;
      for (let i = 0; i < 2; i++) {
        const r = curlOnce(`${t.url}/api/blob?mb=${downloadMiB}`, t.curlArgs);
        if (r.code === '200') t.mibs = Math.max(t.mibs, r.speed / 1048576);
        else t.failures++;
      }
      t.peakMiB = t.pid ? status(t.pid, 'VmHWM') : undefined;
    }
    // 3. RSS under load: 64 keep-alive connections, 1,000, then 9,000 and 30,000 more requests.
    for (const t of targets.filter((x) => x.pid)) {
      t.rss = [];
      for (const n of [1_000, 9_000, 30_000]) {
        t.failures += await load(`${t.url}/api/courses`, n, 64);
        t.rss.push(status(t.pid, 'VmRSS'));
      }
    }

    const by = Object.fromEntries(targets.map((t) => [t.name, t]));
    const platT = by['plat proxy'];
    const reference = by['kubectl proxy'] ?? by['bare Node proxy'];
    const side = (figure) => targets.map((t) => `${t.name} ${figure(t)}`).join(', ');
    const getRatio = median(platT.totals) / median(reference.totals);
    rows.push({
      figure: `plat proxy: one GET on an HTTPS platform, curl time_total through it / through ${reference.name}`,
      target: '≤ 1.15',
      measured: getRatio.toFixed(2),
      ok: getRatio <= 1.15,
      detail: `medians of ${rounds} interleaved rounds, ms: ${side((t) => median(t.totals).toFixed(2))}`,
    });
    const speedRatio = platT.mibs / reference.mibs;
    rows.push({
      figure: `plat proxy: ${downloadMiB} MiB download on an HTTPS platform, speed / ${reference.name}'s; plat's peak RSS`,
      target: '≥ 0.8; ≤ 64 MiB',
      measured: `${speedRatio.toFixed(2)}; ${platT.peakMiB.toFixed(1)} MiB`,
      ok: speedRatio >= 0.8 && platT.peakMiB <= 64,
      detail: `MiB/s (best of 2), peak RSS: ${side((t) => `${t.mibs.toFixed(0)}${t.peakMiB === undefined ? '' : ` (${t.peakMiB.toFixed(1)} MiB)`}`)}`,
    });
    const [at1k, at10k, at40k] = platT.rss;
    const growth = at40k / at10k - 1;
    rows.push({
      figure: 'plat proxy: RSS after 1,000 / 10,000 / 40,000 requests at 64 connections (HTTPS platform)',
      target: '10k → 40k within 10%; ≤ 128 MiB',
      measured: `${at1k.toFixed(0)} / ${at10k.toFixed(0)} / ${at40k.toFixed(0)} MiB`,
      ok: Math.abs(growth) <= 0.1 && at40k <= 128,
      detail: `${(growth * 100).toFixed(1)}% from 10k to 40k; ${targets
        .filter((t) => t.rss && t !== platT)
        .map((t) => `${t.name} ${t.rss.map((v) => v.toFixed(0)).join(' / ')}`)
        .join(', ')}${targets.some((t) => t.failures) ? `; failures: ${side((t) => t.failures)}` : ''}`,
    });
    return targets.map(({ name, totals, mibs, peakMiB, rss, failures }) => ({ name, timeTotalMs: median(totals), mibs, peakMiB, rss, failures }));
  } finally {
    for (const child of children) child.kill('SIGKILL');
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone with its master
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function lineOf(child, pattern, ms = 20_000) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} from ${child.spawnfile}: ${text.slice(0, 400)}`)), ms);
    const onData = (data) => {
      text += data;
      const match = pattern.exec(text);
      if (!match) return;
      clearTimeout(timer);
      resolve(match);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
}

async function waitFor(read) {
  for (let i = 0; i < 100; i++) {
    try {
      return read();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error('nginx did not start');
}

function freePort() {
  return new Promise((resolve) => {
    import('node:net').then(({ createServer }) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      });
    });
  });
}

/** One curl process: its status, time_total (ms) and speed (bytes/s). */
function curlOnce(url, args) {
  const r = spawnSync('curl', ['-s', '--max-time', '120', '-o', '/dev/null', '-w', '%{http_code} %{time_total} %{speed_download}', ...args, url], { encoding: 'utf8' });
  const [code, total, speed] = r.stdout.trim().split(' ');
  return { code, totalMs: Number(total) * 1000, speed: Number(speed) };
}

/** `n` GETs at `concurrency` keep-alive connections; how many failed. */
function load(url, n, concurrency) {
  return new Promise((resolve) => {
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    let sent = 0;
    let done = 0;
    let failed = 0;
    const finish = () => {
      if (++done === n) {
        agent.destroy();
        resolve(failed);
      } else next();
    };
    const next = () => {
      if (sent >= n) return;
      sent++;
      get(url, { agent }, (res) => {
        if (res.statusCode !== 200) failed++;
        res.resume().on('end', finish);
      }).on('error', () => {
        failed++;
        finish();
      });
    };
    for (let i = 0; i < concurrency; i++) next();
  });
}

/** A /proc/PID/status figure in MiB. */
function status(pid, field) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) / 1024;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = [];
  const figures = await benchProxyAnchors({ plat: path.join(here, '..', '..', 'bin', 'plat.js'), rows, rounds: Number(process.argv[2] ?? 101) });
  console.log(`load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const r of rows) console.log(`| ${r.figure} | ${r.target} | ${r.measured}: ${r.detail} | ${r.ok ? 'yes' : 'no'} |`);
  console.log(`JSON ${JSON.stringify(figures)}`);
}
