// `npm run bench`'s plat proxy rows (called by run.mjs, which owns the platform, the login and measure()).
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';

/**
 * plat proxy against its references, on loopback, the platform answering at once:
 * - one GET of /api/courses with curl through the proxy against the same GET with curl straight to the platform
 *   with the token, each timed as curl times it (time_total: connection to last byte), runs interleaved, the median
 *   of the pairwise ratios;
 * - 1,000 sequential curl GETs through the proxy (the sum of their time_total) against 1,000 `plat call`s, each a
 *   whole process (the median of `runs` of them, times 1,000: a thousand starts would take minutes of a shared machine);
 * - the proxy's RSS (VmRSS) after 1,000 and after 10,000 requests sent by 64 concurrent keep-alive connections;
 * - a 1 GiB download through the proxy against curl straight to the platform: speed, and the proxy's peak RSS
 *   (VmHWM) over a proxy started for it alone.
 * Each row names the same figure for a bare Node proxy of a dozen lines (startBareProxy): the floor for any proxy
 * written in Node in front of a Node platform on this machine.
 */
export async function benchProxy({ platform, plat, token, rows, env, pairs = Number(process.env.BENCH_PROXY_RUNS ?? 200), quick = false }) {
  const direct = `${platform.baseUrl}/api/courses`;
  const auth = ['-H', `Authorization: Bearer ${token}`];
  const proxy = await startProxy(plat, env);
  const via = `${proxy.url}api/courses`;
  try {
    // 1. One GET, curl's own timing, interleaved; beside it the floor, a bare Node proxy of a few lines (no key, no
    // checks, no session: a fixed token added), which says what any proxy written in Node costs here.
    const bare = await startBareProxy(platform.baseUrl, token);
    for (let i = 0; i < 20; i++) {
      await curlTime(via);
      await curlTime(direct, auth);
      await curlTime(`${bare.url}/api/courses`);
    }
    const ratios = [];
    const floorRatios = [];
    const viaMs = [];
    const directMs = [];
    const bareMs = [];
    for (let i = 0; i < pairs; i++) {
      const a = await curlTime(via);
      const b = await curlTime(direct, auth);
      const c = await curlTime(`${bare.url}/api/courses`);
      viaMs.push(a);
      directMs.push(b);
      bareMs.push(c);
      ratios.push(a / b);
      floorRatios.push(c / b);
    }
    bare.stop();
    const oneGet = median(ratios);
    rows.push({
      figure: 'floor: the same GET through a bare Node proxy (a dozen lines: no key, no checks, a fixed token) / straight',
      target: '-',
      measured: median(floorRatios).toFixed(2),
      detail: `through it ${median(bareMs).toFixed(2)} ms; median of ${pairs} pairwise ratios`,
    });
    rows.push({
      figure: 'plat proxy: GET /api/courses with curl through it / with curl straight to the platform and the token (curl time_total)',
      target: '≤ 1.15',
      measured: oneGet.toFixed(2),
      ok: oneGet <= 1.15,
      detail: `through ${median(viaMs).toFixed(2)} ms, straight ${median(directMs).toFixed(2)} ms; median of ${pairs} pairwise ratios`,
    });

    // 2. 1,000 sequential requests through the proxy, against 1,000 plat calls.
    let sequentialMs = 0;
    for (let i = 0; i < 1000; i++) sequentialMs += await curlTime(via);
    const callRuns = 30;
    const callMs = [];
    for (let i = 0; i < callRuns; i++) callMs.push(await wallTime(process.execPath, [plat, 'call', 'GET', '/api/courses'], env));
    const thousandCalls = median(callMs) * 1000;
    const faster = thousandCalls / sequentialMs;
    rows.push({
      figure: 'plat proxy: 1,000 sequential curl GETs through it, faster than 1,000 plat calls by',
      target: '≥ 20',
      measured: faster.toFixed(0),
      ok: faster >= 20,
      detail: `1,000 through the proxy ${(sequentialMs / 1000).toFixed(2)} s (sum of curl's time_total); plat call ${median(callMs).toFixed(1)} ms each (median of ${callRuns}), × 1,000 = ${(thousandCalls / 1000).toFixed(1)} s`,
    });

    // 3. Memory over 10,000 requests, 64 connections at once; beside it the bare proxy under the same load, which
    // says how much of the growth is V8 sizing its heap to the load (any Node server's) rather than plat's own.
    const rssOver = async (target, pid) => {
      const rssAt = [];
      const agent = new Agent({ keepAlive: true, maxSockets: 64 });
      let sent = 0;
      for (const upTo of [1_000, 10_000]) {
        await load(target, agent, upTo - sent, 64);
        sent = upTo;
        rssAt.push((await rssKiB(pid, 'VmRSS')) / 1024);
      }
      agent.destroy();
      return rssAt;
    };
    const [at1k, at10k] = await rssOver(via, proxy.pid);
    const growth = at10k / at1k;
    const bareForLoad = await startBareProxy(platform.baseUrl, token);
    const [bare1k, bare10k] = await rssOver(`${bareForLoad.url}/api/courses`, bareForLoad.pid);
    bareForLoad.stop();
    rows.push({
      figure: 'plat proxy: RSS after 1,000 and after 10,000 requests (64 concurrent connections)',
      target: 'within 10%',
      measured: `${at1k.toFixed(1)} → ${at10k.toFixed(1)} MiB`,
      ok: Math.abs(growth - 1) <= 0.1,
      detail: `${((growth - 1) * 100).toFixed(1)}%; the bare Node proxy under the same load ${bare1k.toFixed(1)} → ${bare10k.toFixed(1)} MiB, ${((bare10k / bare1k - 1) * 100).toFixed(1)}%`,
    });
  } finally {
    await proxy.stop();
  }

  // 4. A 1 GiB download (64 MiB with --quick), on a proxy of its own so its peak RSS is the download's.
  const mib = quick ? 64 : 1024;
  const bytes = mib * 1024 * 1024;
  const fresh = await startProxy(plat, env);
  try {
    const throughMs = await curlTime(`${fresh.url}api/download?bytes=${bytes}`);
    const peak = (await rssKiB(fresh.pid, 'VmHWM')) / 1024;
    const straightMs = await curlTime(`${platform.baseUrl}/api/download?bytes=${bytes}`, auth);
    // The floor again: the bare Node proxy's speed for the same download.
    const bare = await startBareProxy(platform.baseUrl, token);
    const bareMs = await curlTime(`${bare.url}/api/download?bytes=${bytes}`);
    bare.stop();
    const speed = straightMs / throughMs;
    rows.push({
      figure: `plat proxy: ${mib} MiB download through it: speed / curl straight to the platform; the proxy's peak RSS`,
      target: '≥ 0.8; ≤ 64 MiB',
      measured: `${speed.toFixed(2)}; ${peak.toFixed(1)} MiB`,
      ok: speed >= 0.8 && peak <= 64,
      detail: `through ${(mib / (throughMs / 1000)).toFixed(0)} MiB/s, straight ${(mib / (straightMs / 1000)).toFixed(0)} MiB/s; through the bare Node proxy ${(mib / (bareMs / 1000)).toFixed(0)} MiB/s (${(straightMs / bareMs).toFixed(2)} of straight)`,
    });
  } finally {
    await fresh.stop();
  }
}

/** `plat proxy` in the background; its URL, pid, and a stop that sends Ctrl-C and waits for it to end. */
function startProxy(plat, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [plat, 'proxy'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const ended = new Promise((r) => child.on('close', r));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const url = /PLAT_PROXY_URL='?([^'\s]+)/.exec(out)?.[1];
      if (url && out.includes('\n')) resolve({ url, pid: child.pid, stop: () => (child.kill('SIGINT'), ended) });
    });
    void ended.then(() => reject(new Error(`plat proxy ended before printing its address: ${out}`)));
  });
}

/** The floor: Node's http server piping to Node's http client with keep-alive, the token added; nothing else. */
function startBareProxy(target, token) {
  const code = `const http = require('node:http');
const agent = new http.Agent({ keepAlive: true });
const target = new URL(process.env.TARGET);
http.createServer((req, res) => {
  const headers = { ...req.headers, host: target.host, authorization: 'Bearer ' + process.env.TOKEN };
  const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  req.pipe(up);
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', code], { env: { ...process.env, TARGET: target, TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8').once('data', (d) => resolve({ url: `http://127.0.0.1:${d.trim()}`, pid: child.pid, stop: () => child.kill() }));
  });
}

/** curl's own time for one GET (time_total, ms), the body to /dev/null. */
function curlTime(url, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sf', '-o', '/dev/null', '-w', '%{time_total}', ...args, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(Number(out) * 1000) : reject(new Error(`curl ${url} exited ${code}`))));
  });
}

function wallTime(file, args, env) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(file, args, { env, stdio: 'ignore' });
    child.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - start) / 1e6) : reject(new Error(`${file} exited ${code}`))));
  });
}

/** `n` GETs of `url`, `concurrency` at a time over the agent's keep-alive connections; each body read to its end. */
async function load(url, agent, n, concurrency) {
  let next = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      request(url, { agent }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.resume().on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await one();
      }
    }),
  );
}

async function rssKiB(pid, field) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
}

function median(values) {
  const s = [...values].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
