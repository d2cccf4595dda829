// `npm run bench`: start-up and streaming figures of plat, measured side by side on this machine.
// Starts the reference platform and (when gnome-keyring is installed) a throwaway gnome-keyring on a private D-Bus
// session, logs in once per token store (the 0600 file, the OS keychain), then for each row runs the two commands
// interleaved (A B A B …) after a warm-up and reports the median of the pairwise time ratios (robust on a noisy,
// shared machine), plus peak RSS, wall time and CPU time of large downloads, and paging through 1,000 pages
// (pages.mjs), and peak RSS against what a hostile server sends at 1x, 10x and 100x (hostile.mjs). Prints a table and writes
// test/bench/results.json. `--quick` skips the 1 GiB download; `--no-keychain` measures the file store only;
// `--startup-only` measures start-up rows only and writes no results.json; `--hostile-only` measures the hostile rows
// only and merges them into results.json (`--batch-only` and `--batch-ops-only` as much for plat batch's rows,
// batch.mjs; `--mcp-only` for the plat mcp rows; `--proxy-only` for plat proxy's); `--without-extra-ca` runs every command
// without NODE_EXTRA_CA_CERTS (see below).
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchMcpStartup } from './mcp.mjs';
import { benchPagination } from './pages.mjs';
import { benchHostile } from './hostile.mjs';
import { benchBatch, benchBatchOps } from './batch.mjs';
import { benchProxy } from './proxy.mjs';
import { benchProxyAnchors } from './proxy-anchors.mjs';
import { signIn } from './sign-in.mjs';
import { renderResults, writeBenchReadme } from './readme.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const plat = path.join(root, 'bin', 'plat.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const WARMUP = 5;
const quick = process.argv.includes('--quick');
const withKeychain = !process.argv.includes('--no-keychain');
const startupOnly = process.argv.includes('--startup-only'); // a quick look: no downloads, results.json untouched
// Only the hostile-server rows, merged into the results.json there is (the rest of it untouched).
const hostileOnly = process.argv.includes('--hostile-only');
class HostileOnly extends Error {}
// Only the plat batch rows (--batch-ops-only: only those of op lines), merged into the results.json there is.
const batchOpsOnly = process.argv.includes('--batch-ops-only');
const batchOnly = batchOpsOnly || process.argv.includes('--batch-only');
// Only the plat mcp start-up rows, merged into the results.json there is.
const mcpOnly = process.argv.includes('--mcp-only');
// Only the plat proxy rows, merged into the results.json there is (the rest of it untouched).
const proxyOnly = process.argv.includes('--proxy-only');
class StartupOnly extends Error {}
// Only the start-up rows (without plat mcp's) and a 512 MiB download's CPU beside Node's own pipe, merged into the
// results.json there is; with --before=<dir>, the same rows of the build there (its bin/plat.js) beside each, as
// `before` (issue 42's before and after, measured in one run).
const startupRowsOnly = process.argv.includes('--startup-rows-only');
const beforeDir = process.argv.find((arg) => arg.startsWith('--before='))?.slice('--before='.length);

// The keychain rows need a Secret Service that is nobody's real keychain: run this script again under
// dbus-run-session with a fresh gnome-keyring, unlocked from stdin, its data in a throwaway HOME (as test/run.mjs).
if (withKeychain && process.env.PLAT_BENCH_BUS !== '1') process.exit(await underPrivateKeyring());

const { startPlatform } = await import('../platform/index.mjs');
const platform = await startPlatform();
const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-bench-'));
const baseEnv = { ...process.env };
for (const key of Object.keys(baseEnv)) if (key.startsWith('PLAT_')) delete baseEnv[key];
// NODE_EXTRA_CA_CERTS makes every Node start read and parse that file: with Debian's whole bundle (as on the
// machines these figures come from) `node -e 0` takes 2-3x as long, which lowers every ratio to it. The figures are
// measured with the environment as it is; `--without-extra-ca` measures them without it.
const withoutExtraCa = process.argv.includes('--without-extra-ca');
if (withoutExtraCa) delete baseEnv.NODE_EXTRA_CA_CERTS;
const stores = {
  file: { ...baseEnv, PLAT_CONFIG_DIR: path.join(dir, 'file'), PLAT_TOKEN_STORE: 'file' },
  // Unset, as most people run it: the profile records the keychain at login and later commands follow it.
  keychain: { ...baseEnv, PLAT_CONFIG_DIR: path.join(dir, 'keychain') },
};
const keychainReady = withKeychain && process.env.PLAT_BENCH_KEYRING === '1';
const perf = which('perf') !== undefined && perfWorks();
/** GNU time (Debian's `time`) reports a download's CPU time; without it only wall time and memory are measured. */
const gnuTime = spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0;
let env = stores.file;

const results = {
  date: new Date().toISOString(),
  machine: machine(),
  node: process.version,
  tokenStores: keychainReady ? ['file', 'keychain'] : ['file'],
  note: `load average ${os.loadavg().map((l) => l.toFixed(1)).join(', ')} at the start (a shared machine: other jobs run beside the benchmark); NODE_EXTRA_CA_CERTS ${baseEnv.NODE_EXTRA_CA_CERTS ? `set (${baseEnv.NODE_EXTRA_CA_CERTS})` : 'unset'}; figures are medians of ${RUNS} pairwise ratios${perf ? ', wall clock and (perf stat task-clock) CPU time' : ', wall clock'}`,
  rows: [],
};
try {
  if (hostileOnly) {
    const previous = JSON.parse(await readFile(path.join(root, 'test', 'bench', 'results.json'), 'utf8'));
    const rows = previous.rows.filter((r) => !r.figure.includes(': peak RSS at 1x / 10x / 100x'));
    previous.hostile = await benchHostile({ plat, measure, rows, env: stores.file });
    previous.rows = rows;
    previous.hostileMeasuredAt = new Date().toISOString();
    await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(previous, null, 2)}\n`);
    await writeBenchReadme(previous);
    results.rows = rows.filter((r) => r.figure.includes(': peak RSS at 1x / 10x / 100x'));
    throw new HostileOnly();
  }
  await login();
  if (batchOnly) {
    const previous = JSON.parse(await readFile(path.join(root, 'test', 'bench', 'results.json'), 'utf8'));
    // --batch-ops-only: only the op-line rows (each names createCourse), the other batch rows kept as they are.
    const isBatchRow = (r) => r.figure.includes('plat batch') && (!batchOpsOnly || r.figure.includes('createCourse'));
    const token = (await capture(process.execPath, [plat, 'token'])).trim();
    const batchRows = [];
    if (!batchOpsOnly) previous.batch = await benchBatch({ platform, plat, token, measure, rows: batchRows, dir, env: stores.file });
    previous.batchOps = await benchBatchOps({ platform, plat, token, measure, rows: batchRows, dir, env: stores.file });
    previous.rows = [...previous.rows.filter((r) => !isBatchRow(r)), ...batchRows];
    if (batchOpsOnly) previous.batchOpsMeasuredAt = new Date().toISOString();
    else previous.batchMeasuredAt = previous.batchOpsMeasuredAt = new Date().toISOString();
    await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(previous, null, 2)}\n`);
    await writeBenchReadme(previous);
    results.rows = batchRows;
    throw new HostileOnly();
  }
  if (mcpOnly) {
    const previous = JSON.parse(await readFile(path.join(root, 'test', 'bench', 'results.json'), 'utf8'));
    const mcpRows = await mcpStartupRows();
    previous.rows = [...previous.rows.filter((r) => !r.figure.includes('plat mcp')), ...mcpRows];
    previous.mcpMeasuredAt = new Date().toISOString();
    await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(previous, null, 2)}\n`);
    await writeBenchReadme(previous);
    results.rows = mcpRows;
    throw new HostileOnly();
  }
  if (proxyOnly) {
    const previous = JSON.parse(await readFile(path.join(root, 'test', 'bench', 'results.json'), 'utf8'));
    // Its own rows and the bare proxy's floor beside them, replaced as one (each run measured the floor again).
    const isProxyRow = (r) => r.figure.startsWith('plat proxy:') || r.figure.startsWith('floor: the same GET through a bare Node proxy');
    const token = (await capture(process.execPath, [plat, 'token'])).trim();
    const proxyRows = [];
    await benchProxy({ platform, plat, token, rows: proxyRows, env: stores.file, quick });
    await benchProxyAnchors({ plat, rows: proxyRows, rounds: quick ? 41 : 101, downloadMiB: quick ? 256 : 1024 });
    previous.rows = [...previous.rows.filter((r) => !isProxyRow(r)), ...proxyRows];
    previous.proxyMeasuredAt = new Date().toISOString();
    await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(previous, null, 2)}\n`);
    await writeBenchReadme(previous);
    results.rows = proxyRows;
    throw new HostileOnly();
  }
  if (startupRowsOnly) {
    if (keychainReady) {
      env = stores.keychain;
      await login();
      env = stores.file;
    }
    const previous = JSON.parse(await readFile(path.join(root, 'test', 'bench', 'results.json'), 'utf8'));
    const token = (await capture(process.execPath, [plat, 'token'])).trim();
    const measureBoth = async (measureRows) => {
      const rows = await measureRows(plat);
      if (beforeDir) {
        const before = await measureRows(path.resolve(beforeDir, 'bin', 'plat.js'));
        for (const r of rows) {
          const then = before.find((b) => b.figure === r.figure);
          if (then) r.before = `${then.measured}${then.cpuRatio ? ` (CPU time ${then.cpuRatio})` : ''}`;
        }
      }
      return rows;
    };
    const rows = [...(await measureBoth((bin) => startupRows(bin, token))), ...(await measureBoth(async (bin) => [await downloadCpuRow(bin)]))];
    const figures = new Set(rows.map((r) => r.figure));
    const isStartupRow = (r) => / \/ node -e 0$/.test(r.figure) && !r.figure.includes('plat mcp');
    const kept = previous.rows.filter((r) => !figures.has(r.figure) && !isStartupRow(r) && !r.figure.startsWith('floor: node http.get'));
    previous.rows = [...rows, ...kept];
    previous.startupMeasuredAt = new Date().toISOString();
    previous.startupNote = results.note;
    await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(previous, null, 2)}\n`);
    await writeBenchReadme(previous);
    results.rows = rows;
    throw new HostileOnly();
  }
  if (keychainReady) {
    env = stores.keychain;
    await login();
    const recorded = JSON.parse(await readFile(path.join(stores.keychain.PLAT_CONFIG_DIR, 'profiles', 'default.json'), 'utf8')).tokenStore;
    if (recorded !== 'keychain') throw new Error(`the keychain login stored its session in the ${recorded} store`);
    env = stores.file;
  } else if (withKeychain) {
    results.rows.push({ figure: 'keychain rows', target: '-', measured: null, note: `no gnome-keyring on a private D-Bus (apt-get install -y gnome-keyring dbus libsecret-1-0)` });
  }
  const token = (await capture(process.execPath, [plat, 'token'])).trim();
  results.rows.push(...(await startupRows(plat, token)));
  results.rows.push(...(await mcpStartupRows()));

  if (startupOnly) throw new StartupOnly();
  const sizes = quick ? [64, 256] : [64, 256, 1024];
  const downloads = [];
  for (const mib of sizes) downloads.push(await download(mib, token));
  for (const d of downloads) {
    results.rows.push({
      figure: `${d.mib} MiB through plat call > /dev/null: peak RSS`,
      target: '≤ 64 MiB',
      measured: `${d.peakMiB.toFixed(1)} MiB`,
      ok: d.peakMiB <= 64,
      detail: `${(d.mib / d.platMiBs).toFixed(2)} s, ${d.platMiBs.toFixed(0)} MiB/s${Number.isFinite(d.cpuS) ? `, ${(d.cpuS / (d.mib / 1024)).toFixed(2)} CPU s/GiB` : ''}`,
    });
  }
  const big = downloads.at(-1);
  const floor = await download(big.mib, token, true);
  results.rows.push({ figure: `floor: ${big.mib} MiB through node's own http.get().pipe(stdout): peak RSS, speed / curl's`, target: '-', measured: `${floor.peakMiB.toFixed(1)} MiB, ${(floor.platMiBs / floor.curlMiBs).toFixed(2)}` });
  results.rows.push({ figure: `${big.mib} MiB download speed / curl's`, target: '≥ 0.5', measured: (big.platMiBs / big.curlMiBs).toFixed(2), ok: big.platMiBs / big.curlMiBs >= 0.5, detail: `plat ${big.platMiBs.toFixed(0)} MiB/s, curl ${big.curlMiBs.toFixed(0)} MiB/s` });
  results.downloads = downloads;

  results.pagination = await benchPagination({ platform, plat, token, measure, median, rows: results.rows, runs: quick ? 3 : undefined });
  results.hostile = await benchHostile({ plat, measure, rows: results.rows, env: stores.file });
  results.batch = await benchBatch({ platform, plat, token, measure, rows: results.rows, dir, env: stores.file, runs: quick ? 1 : undefined });
  results.batchOps = await benchBatchOps({ platform, plat, token, measure, rows: results.rows, dir, env: stores.file, runs: quick ? 1 : undefined });
  await benchProxy({ platform, plat, token, rows: results.rows, env: stores.file, quick, pairs: quick ? 40 : undefined });
  await benchProxyAnchors({ plat, rows: results.rows, rounds: quick ? 41 : 101, downloadMiB: quick ? 256 : 1024 });

  platform.stats.reset();
  await login();
  const metadataOrRegistration = ['GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-authorization-server', 'GET /.well-known/openid-configuration', 'register'].reduce((n, k) => n + platform.stats.count(k), 0);
  results.rows.push({ figure: 'second plat login: metadata or registration requests', target: '0', measured: String(metadataOrRegistration), ok: metadataOrRegistration === 0, detail: `authorize ${platform.stats.count('GET /oauth/authorize')}, token ${platform.stats.count('token:authorization_code')}` });
} catch (error) {
  if (!(error instanceof StartupOnly) && !(error instanceof HostileOnly)) throw error;
} finally {
  await platform.close();
  await rm(dir, { recursive: true, force: true });
}

printTable();
if (!startupOnly && !hostileOnly && !batchOnly && !mcpOnly && !proxyOnly && !startupRowsOnly) {
  await writeFile(path.join(root, 'test', 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeBenchReadme(results);
}

/** Re-runs this script on a private D-Bus session with a fresh, unlocked gnome-keyring; its exit code. */
async function underPrivateKeyring() {
  const installed = ['dbus-run-session', 'gnome-keyring-daemon'].every((c) => which(c));
  const home = await mkdtemp(path.join(os.tmpdir(), 'plat-bench-home-'));
  const xdg = { XDG_DATA_HOME: path.join(home, 'data'), XDG_CACHE_HOME: path.join(home, 'cache'), XDG_RUNTIME_DIR: path.join(home, 'run') };
  for (const d of Object.values(xdg)) await mkdir(d, { recursive: true, mode: 0o700 });
  const childEnv = { ...process.env, HOME: home, ...xdg, PLAT_BENCH_BUS: '1' };
  delete childEnv.DBUS_SESSION_BUS_ADDRESS;
  delete childEnv.GNOME_KEYRING_CONTROL;
  const self = [process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const shell = [
    'if out=$(printf plat-bench | gnome-keyring-daemon --unlock --components=secrets) && eval "$out"; then',
    '  export GNOME_KEYRING_CONTROL PLAT_BENCH_KEYRING=1',
    'else',
    '  echo "bench: gnome-keyring-daemon did not start; no keychain rows" >&2',
    'fi',
    'exec "$@"',
  ].join('\n');
  const [command, args] = installed ? ['dbus-run-session', ['--', 'sh', '-c', shell, 'sh', ...self]] : [self[0], self.slice(1)];
  if (!installed) process.stderr.write('bench: dbus-run-session or gnome-keyring-daemon missing; no keychain rows (apt-get install -y gnome-keyring dbus libsecret-1-0)\n');
  const child = spawn(command, args, { env: childEnv, stdio: ['ignore', 'inherit', 'pipe'] });
  // The daemons' own start-up chatter says nothing about the benchmark.
  const noise = /fd limit|transient service directory|discover_other_daemon|insufficient process capabilities|^dbus-daemon\[\d+\]: ?$/;
  let partial = '';
  child.stderr.on('data', (d) => {
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line && !noise.test(line)) process.stderr.write(`${line}\n`);
  });
  const code = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  await rm(home, { recursive: true, force: true });
  return code;
}

/**
 * The start-up rows of the plat at `bin` (bin/plat.js of this checkout, or of another build with --before=<dir>):
 * each command beside `node -e 0`, interleaved, and the floor of Node's own request.
 */
async function startupRows(bin, token) {
  const saved = results.rows;
  results.rows = [];
  try {
    const url = `${platform.baseUrl}/api/courses`;
    const nodeBare = [process.execPath, '-e', '0'];
    const platArgs = (...args) => [process.execPath, bin, ...args];

    row('plat --version / node -e 0', 1.05, '≤', await ratio(platArgs('--version'), nodeBare));
    for (const store of keychainReady ? ['file', 'keychain'] : ['file']) {
      env = stores[store];
      // Issue 42's targets (file: call 1.30, whoami 1.30, token 1.15; keychain: call 1.40); the keychain's whoami and token keep theirs.
      const targets = store === 'file' ? { call: 1.3, whoami: 1.3, token: 1.15 } : { call: 1.4, whoami: 1.45, token: 1.35 };
      row(`${store}: plat call GET /api/courses / node -e 0`, targets.call, '≤', await ratio(platArgs('call', 'GET', '/api/courses'), nodeBare));
      row(`${store}: plat whoami / node -e 0`, targets.whoami, '≤', await ratio(platArgs('whoami'), nodeBare));
      const tokenRatio = await ratio(platArgs('token'), nodeBare);
      if (targets.token === undefined) results.rows.push(reference(`${store}: plat token / node -e 0`, tokenRatio));
      else row(`${store}: plat token / node -e 0`, targets.token, '≤', tokenRatio);
    }
    env = stores.file;
    const http = which('http');
    if (http) {
      row('file: plat call / HTTPie', 0.5, '≤', await ratio(platArgs('call', 'GET', '/api/courses'), [http, '--ignore-stdin', '--body', 'GET', url, `Authorization:Bearer ${token}`]));
    } else {
      results.rows.push({ figure: 'plat call / HTTPie', target: '≤ 0.5', measured: null, note: 'httpie not installed (apt-get install -y httpie)' });
    }
    // The floor: Node itself making the same request and printing the body, with nothing of plat's.
    const rawGet = `require('http').get(${JSON.stringify(url)},{headers:{authorization:${JSON.stringify(`Bearer ${token}`)}}},r=>r.pipe(process.stdout))`;
    results.rows.push(reference('floor: node http.get → stdout / node -e 0', await ratio([process.execPath, '-e', rawGet], nodeBare)));
    return results.rows;
  } finally {
    results.rows = saved;
    env = stores.file;
  }
}

/**
 * A large download's CPU time beside Node's own `http.get(url).pipe(stdout)` (median of interleaved pairs, GNU time's
 * user + system), with plat's peak RSS: what holding memory flat costs (issue 42: ≤ 1.1 at ≤ 64 MiB).
 */
async function downloadCpuRow(bin, mib = 512, pairs = 9) {
  const bytes = mib * 1024 * 1024;
  const url = `${platform.baseUrl}/api/download?bytes=${bytes}`;
  const ratios = [];
  const platCpu = [];
  const nodeCpu = [];
  let peakKiB = 0;
  await measure(process.execPath, [bin, 'call', 'GET', `/api/download?bytes=${bytes}`]);
  for (let i = 0; i < pairs; i++) {
    const a = await measure(process.execPath, [bin, 'call', 'GET', `/api/download?bytes=${bytes}`]);
    const b = await measure(process.execPath, ['-e', `require('http').get(${JSON.stringify(url)},r=>r.pipe(process.stdout))`]);
    ratios.push(a.cpuS / b.cpuS);
    platCpu.push(a.cpuS);
    nodeCpu.push(b.cpuS);
    peakKiB = Math.max(peakKiB, a.peakKiB);
  }
  const r = median(ratios);
  const peakMiB = peakKiB / 1024;
  return {
    figure: `${mib} MiB through plat call > /dev/null: CPU / node's own http.get().pipe(stdout); plat's peak RSS`,
    target: '≤ 1.1; ≤ 64 MiB',
    measured: `${r.toFixed(2)}; ${peakMiB.toFixed(1)} MiB`,
    ok: r <= 1.1 && peakMiB <= 64,
    detail: `plat ${median(platCpu).toFixed(2)} s, node ${median(nodeCpu).toFixed(2)} s of CPU (user + system); medians of ${pairs} pairs`,
  };
}

/**
 * How long an agent host waits for plat mcp's tools (the SDK is loaded from dist/mcp.cjs, by this command alone):
 * beside bare node, and beside `plat op` listing the same operations, which it must answer within 1.5x of.
 */
async function mcpStartupRows() {
  const rows = [];
  const bench = (versus) => benchMcpStartup({ plat, env: stores.file, spawn, median, runs: RUNS, warmup: WARMUP, versus });
  const bare = await bench(undefined);
  rows.push({ figure: 'file: plat mcp, start to first tools/list answer / node -e 0', target: '-', measured: bare.median.toFixed(2), detail: `A ${bare.aMs.toFixed(1)} ms, B ${bare.bMs.toFixed(1)} ms; medians of ${RUNS}` });
  const op = await bench([process.execPath, plat, 'op']);
  rows.push({ figure: 'file: plat mcp, start to first tools/list answer / plat op (the list)', target: '≤ 1.5', measured: op.median.toFixed(2), ok: op.median <= 1.5, detail: `A ${op.aMs.toFixed(1)} ms, B ${op.bMs.toFixed(1)} ms; medians of ${RUNS}` });
  return rows;
}

function reference(figure, r) {
  return { figure, target: '-', measured: r.median.toFixed(2), detail: detail(r), ...cpuOf(r) };
}

function row(figure, target, op, r) {
  results.rows.push({ figure, target: `${op} ${target}`, measured: r.median.toFixed(2), ok: op === '≤' ? r.median <= target : r.median >= target, detail: detail(r), ...cpuOf(r) });
}

function detail(r) {
  const wall = `A ${r.aMs.toFixed(1)} ms, B ${r.bMs.toFixed(1)} ms`;
  const cpu = r.cpu ? `; CPU time ${r.cpu.median.toFixed(2)}: ${r.cpu.aMs.toFixed(1)} / ${r.cpu.bMs.toFixed(1)} ms` : '';
  return `${wall}${cpu}; medians of ${RUNS}`;
}

function cpuOf(r) {
  return r.cpu ? { cpuRatio: r.cpu.median.toFixed(2) } : {};
}

/**
 * Interleaved A/B runs; the median of the per-pair ratios A/B, and each side's median time. With `perf` (linux-perf)
 * each run goes through `perf stat`, which times the command itself (its own start-up excluded) and counts the CPU
 * time it used (task-clock): on a loaded machine CPU time is the steadier figure, so it is reported beside the
 * wall-clock ratio the targets are judged on.
 */
// Async spawns: the platform runs in this process and must keep serving while a command runs.
async function ratio(a, b) {
  // Every stream of the command /dev/null, as hyperfine and cron start a program (plat chooses its bundle by them:
  // a terminal on stdin and stderr could be asked a question); perf writes its counts to a file of its own.
  const perfOut = path.join(dir, 'perf-stat.txt');
  const time = (argv) =>
    new Promise((resolve, reject) => {
      const start = process.hrtime.bigint();
      const [file, args] = perf ? ['perf', ['stat', '-o', perfOut, '-e', 'task-clock', '--', ...argv]] : [argv[0], argv.slice(1)];
      const child = spawn(file, args, { env, stdio: 'ignore' });
      child.on('close', async (code) => {
        if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code} (run it by hand to see why)`));
        const counts = perf ? await readFile(perfOut, 'utf8') : '';
        const elapsed = /([\d.]+) seconds time elapsed/.exec(counts);
        const cpu = /([\d.]+) msec task-clock/.exec(counts);
        resolve({ ms: elapsed ? Number(elapsed[1]) * 1000 : Number(process.hrtime.bigint() - start) / 1e6, cpuMs: cpu ? Number(cpu[1]) : undefined });
      });
    });
  for (let i = 0; i < WARMUP; i++) {
    await time(a);
    await time(b);
  }
  const ratios = [];
  const cpuRatios = [];
  const as = [];
  const bs = [];
  const cpuAs = [];
  const cpuBs = [];
  for (let i = 0; i < RUNS; i++) {
    const ta = await time(a);
    const tb = await time(b);
    as.push(ta.ms);
    bs.push(tb.ms);
    ratios.push(ta.ms / tb.ms);
    if (ta.cpuMs !== undefined && tb.cpuMs !== undefined) {
      cpuAs.push(ta.cpuMs);
      cpuBs.push(tb.cpuMs);
      cpuRatios.push(ta.cpuMs / tb.cpuMs);
    }
  }
  const cpu = cpuRatios.length ? { median: median(cpuRatios), aMs: median(cpuAs), bMs: median(cpuBs) } : undefined;
  return { median: median(ratios), aMs: median(as), bMs: median(bs), cpu };
}

/** Whether `perf stat` can count this user's processes here (kernel.perf_event_paranoid ≤ 2). */
function perfWorks() {
  const r = spawnSync('perf', ['stat', '-e', 'task-clock', '--', process.execPath, '-e', '0'], { encoding: 'utf8' });
  return r.status === 0 && /msec task-clock/.test(r.stderr ?? '');
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
    cpuS: platRun.cpuS,
    platMiBs: mib / (platRun.ms / 1000),
    curlMiBs: mib / (curlRun.ms / 1000),
  };
}

/**
 * Runs a command with stdout to /dev/null, polling /proc for its peak RSS (VmHWM only grows); its CPU time (user +
 * system) is what /usr/bin/time reports for it, the steady figure on a loaded machine where wall time is not.
 * `options.env` replaces the store's environment; `options.anyExit` measures a command that is meant to fail.
 */
function measure(file, args, options = {}) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const [command, argv] = gnuTime ? ['/usr/bin/time', ['-f', '%U %S', file, ...args]] : [file, args];
    const child = spawn(command, argv, { env: options.env ?? env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    let peakKiB = 0;
    const poll = setInterval(async () => {
      // The measured process is /usr/bin/time's only child.
      const children = gnuTime ? await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').catch(() => '') : String(child.pid);
      for (const pid of children.trim().split(/\s+/).filter(Boolean)) {
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
        const m = /VmHWM:\s+(\d+) kB/.exec(status);
        if (m) peakKiB = Math.max(peakKiB, Number(m[1]));
      }
    }, 20);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      const [user, system] = gnuTime ? (err.trim().split('\n').at(-1) ?? '').split(' ').map(Number) : [NaN, NaN];
      if (code !== 0 && !options.anyExit) reject(new Error(`${file} exited ${code}: ${err}`));
      else resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, peakKiB, cpuS: user + system });
    });
  });
}

async function login() {
  await signIn(plat, platform, env, ['--base-url', platform.baseUrl, '--scope', 'courses:read courses:write']);
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
  console.log(renderResults(results));
}
