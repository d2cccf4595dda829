// `npm run bench`'s plat batch rows (called by run.mjs, which owns the platform, the login and measure()).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * 10,000 GETs against a server that answers each in 20 ms (the platform's apiLatencyMs knob), through
 * `plat batch --concurrency 16`, against the ideal (16 in flight / 20 ms = 800 a second, 12.5 s) and against
 * `xargs -P16 curl` with the token (a process per request, as a shell loop does it). Peak RSS of plat batch is
 * compared between 10,000 and 100,000 lines (the input streamed, results written as they complete) to show it flat.
 */
export async function benchBatch({ platform, plat, token, measure, rows, dir, env, runs = Number(process.env.BENCH_BATCH_RUNS ?? 3) }) {
  const latencyMs = 20;
  const concurrency = 16;
  const url = `${platform.baseUrl}/api/status/200`;
  const lines = async (n) => {
    const file = path.join(dir, `batch-${n}.ndjson`);
    await writeFile(file, `${JSON.stringify({ method: 'GET', path: '/api/status/200' })}\n`.repeat(n));
    return file;
  };
  const urls = path.join(dir, 'urls.txt');
  await writeFile(urls, `${url}\n`.repeat(10_000));
  const small = await lines(10_000);
  const large = await lines(100_000);
  const curlArgs = ['-c', `xargs -P${concurrency} -n1 curl -s -o /dev/null -H ${shellQuote(`Authorization: Bearer ${token}`)} < ${shellQuote(urls)}`];
  const saved = platform.knobs.apiLatencyMs;
  platform.knobs.apiLatencyMs = latencyMs;
  try {
    const batchMs = [];
    const curlMs = [];
    let peak10k = 0;
    for (let i = 0; i < runs; i++) {
      const b = await measure(process.execPath, [plat, 'batch', small, '--concurrency', String(concurrency)], { env });
      batchMs.push(b.ms);
      peak10k = Math.max(peak10k, b.peakKiB / 1024);
      curlMs.push((await measure('sh', curlArgs, { env })).ms);
    }
    const big = await measure(process.execPath, [plat, 'batch', large, '--concurrency', String(concurrency)], { env });
    const best = Math.min(...batchMs);
    const ideal = (10_000 / concurrency) * latencyMs;
    const ofIdeal = ideal / best;
    const vsCurl = Math.min(...curlMs) / best;
    rows.push({
      figure: `10,000 GETs, 20 ms each, plat batch --concurrency ${concurrency}: throughput / the ideal (${concurrency} / 20 ms)`,
      target: '≥ 0.9',
      measured: ofIdeal.toFixed(2),
      ok: ofIdeal >= 0.9,
      detail: `plat batch ${(best / 1000).toFixed(1)} s (${Math.round(10_000 / (best / 1000))}/s; best of ${runs}), ideal ${(ideal / 1000).toFixed(1)} s`,
    });
    rows.push({
      figure: `10,000 GETs, 20 ms each: plat batch --concurrency ${concurrency} / xargs -P${concurrency} curl (throughput)`,
      target: '> 1',
      measured: vsCurl.toFixed(2),
      ok: vsCurl > 1,
      detail: `xargs -P${concurrency} curl ${(Math.min(...curlMs) / 1000).toFixed(1)} s (best of ${runs})`,
    });
    rows.push({
      figure: 'plat batch peak RSS, 10,000 → 100,000 lines',
      target: 'flat (≤ 1.25x)',
      measured: `${peak10k.toFixed(1)} → ${(big.peakKiB / 1024).toFixed(1)} MiB`,
      ok: big.peakKiB / 1024 <= peak10k * 1.25,
      detail: `100,000 lines in ${(big.ms / 1000).toFixed(1)} s`,
    });
    return { batchMs, curlMs, bigMs: big.ms, peak10kMiB: peak10k, peak100kMiB: big.peakKiB / 1024 };
  } finally {
    platform.knobs.apiLatencyMs = saved;
  }
}

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/**
 * Lines that name an operation against the same requests as raw lines: 2,000 createCourse lines with a body (checked
 * against the operation's schema, as plat op checks it), through `plat batch --concurrency 16` at 20 ms a request,
 * against 2,000 raw POST /api/courses lines with the same bodies and against `xargs -P16 curl`; and `--check` of the
 * 2,000 op lines alone. Before one validator was compiled per operation per run, the op lines took 42 s of CPU to
 * check and 107 s to run (issue 33); the raw lines 7.6 s.
 */
export async function benchBatchOps({ platform, plat, token, measure, rows, dir, env, runs = Number(process.env.BENCH_BATCH_RUNS ?? 3) }) {
  const latencyMs = 20;
  const concurrency = 16;
  const count = 2_000;
  const body = (i) => ({ title: `Course ${i}`, seats: 1 + (i % 300), level: 'beginner' });
  const opFile = path.join(dir, 'ops.ndjson');
  const rawFile = path.join(dir, 'raw-posts.ndjson');
  const curlFile = path.join(dir, 'curl-posts.txt');
  const lines = Array.from({ length: count }, (_, i) => i);
  await writeFile(opFile, lines.map((i) => `${JSON.stringify({ id: i, op: 'createCourse', body: body(i) })}\n`).join(''));
  await writeFile(rawFile, lines.map((i) => `${JSON.stringify({ id: i, method: 'POST', path: '/api/courses', body: body(i) })}\n`).join(''));
  // One body a line for xargs (-d '\n': each line one argument, as it is): each curl posts its line as the body.
  await writeFile(curlFile, lines.map((i) => `${JSON.stringify(body(i))}\n`).join(''));
  const url = `${platform.baseUrl}/api/courses`;
  const curlArgs = ['-c', `xargs -d '\\n' -P${concurrency} -n1 curl -s -o /dev/null -X POST -H 'content-type: application/json' -H ${shellQuote(`Authorization: Bearer ${token}`)} ${shellQuote(url)} -d < ${shellQuote(curlFile)}`];
  const saved = platform.knobs.apiLatencyMs;
  platform.knobs.apiLatencyMs = latencyMs;
  try {
    const opMs = [];
    const rawMs = [];
    const curlMs = [];
    const checkMs = [];
    for (let i = 0; i < runs; i++) {
      opMs.push((await measure(process.execPath, [plat, 'batch', opFile, '--concurrency', String(concurrency)], { env })).ms);
      rawMs.push((await measure(process.execPath, [plat, 'batch', rawFile, '--concurrency', String(concurrency)], { env })).ms);
      curlMs.push((await measure('sh', curlArgs, { env })).ms);
      checkMs.push((await measure(process.execPath, [plat, 'batch', opFile, '--check'], { env })).ms);
    }
    const op = Math.min(...opMs);
    const raw = Math.min(...rawMs);
    const curl = Math.min(...curlMs);
    const check = Math.min(...checkMs);
    const ofRaw = raw / op;
    rows.push({
      figure: `2,000 createCourse op lines with a body, 20 ms each, plat batch --concurrency ${concurrency}: throughput / the same requests as raw lines`,
      target: '≥ 0.9',
      measured: ofRaw.toFixed(2),
      ok: ofRaw >= 0.9,
      detail: `op lines ${(op / 1000).toFixed(2)} s (${Math.round(count / (op / 1000))}/s), raw lines ${(raw / 1000).toFixed(2)} s (${Math.round(count / (raw / 1000))}/s); best of ${runs}`,
    });
    rows.push({
      figure: `2,000 createCourse op lines, 20 ms each: plat batch --concurrency ${concurrency} / xargs -P${concurrency} curl (throughput)`,
      target: '> 1',
      measured: (curl / op).toFixed(2),
      ok: curl / op > 1,
      detail: `xargs -P${concurrency} curl ${(curl / 1000).toFixed(2)} s (best of ${runs})`,
    });
    rows.push({
      figure: 'plat batch --check of 2,000 createCourse op lines: wall time',
      target: '< 2 s',
      measured: `${(check / 1000).toFixed(2)} s`,
      ok: check < 2000,
      detail: `best of ${runs}, start-up and the API description's download included`,
    });
    return { opMs, rawMs, curlMs, checkMs };
  } finally {
    platform.knobs.apiLatencyMs = saved;
  }
}
