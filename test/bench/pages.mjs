// `npm run bench`'s pagination rows (called by run.mjs, which owns the platform, the login and measure()).

/**
 * `plat call --paginate --ndjson > /dev/null` over 1,000 pages of 100 items (Link-header style), beside a minimal
 * Node loop making the same requests (same token, keep-alive, follows rel="next", prints each item as a line).
 * plat's overhead per page is its wall time less the server's own time answering the pages, over the page count;
 * peak RSS is compared between 10 and 1,000 pages to show it flat. Wall time on a shared machine swings with its
 * load, so the CPU time (user + system, which measure() takes from /usr/bin/time) of both is reported beside it.
 */
export async function benchPagination({ platform, plat, token, measure, median, rows, runs: fixedRuns }) {
  // Every Node start reads these certificates (~75 ms of CPU on a machine with the system bundle), plat's and the
  // loop's alike: it narrows the ratios, so the table says when it was set.
  const extraCaNote = process.env.NODE_EXTRA_CA_CERTS ? '; NODE_EXTRA_CA_CERTS set, which both pay at start-up' : '';
  const runs = fixedRuns ?? Number(process.env.BENCH_PAGE_RUNS ?? 7);
  const query = (total) => `per_page=100&total=${total}`;
  const platArgs = (total) => [plat, 'call', 'GET', `/api/lists/link?${query(total)}`, '--paginate', '--ndjson'];
  const loop = (total) => [
    '-e',
    `const http=require('http');const auth=${JSON.stringify(`Bearer ${token}`)};` +
      `const get=(u)=>new Promise((ok,no)=>http.get(u,{headers:{authorization:auth}},(r)=>{const c=[];r.on('data',(d)=>c.push(d));r.on('end',()=>ok({link:r.headers.link||'',body:Buffer.concat(c).toString()}))}).on('error',no));` +
      `(async()=>{let u=${JSON.stringify(`${platform.baseUrl}/api/lists/link?${query(total)}`)};while(u){const p=await get(u);` +
      `process.stdout.write(JSON.parse(p.body).map((i)=>JSON.stringify(i)).join('\\n')+'\\n');` +
      `const m=/<([^>]*)>;\\s*rel="next"/.exec(p.link);u=m?new URL(m[1],u).href:undefined}})()`,
  ];
  // Warm-up (code cache, page cache), then interleaved pairs.
  await measure(process.execPath, platArgs(1000));
  await measure(process.execPath, loop(1000));
  const platMs = [];
  const loopMs = [];
  const ratios = [];
  const overheads = [];
  let peak1000 = 0;
  const platCpu = [];
  const loopCpu = [];
  for (let i = 0; i < runs; i++) {
    platform.lists.reset();
    const p = await measure(process.execPath, platArgs(100_000));
    const busy = platform.lists.busyMs;
    if (platform.lists.served.link !== 1000) throw new Error(`plat fetched ${platform.lists.served.link} pages, not 1000`);
    const l = await measure(process.execPath, loop(100_000));
    platMs.push(p.ms);
    loopMs.push(l.ms);
    ratios.push(p.ms / l.ms);
    overheads.push((p.ms - busy) / 1000);
    peak1000 = Math.max(peak1000, p.peakKiB / 1024);
    if (Number.isFinite(p.cpuS) && Number.isFinite(l.cpuS)) {
      platCpu.push(p.cpuS);
      loopCpu.push(l.cpuS);
    }
  }
  let peak10 = 0;
  for (let i = 0; i < 3; i++) peak10 = Math.max(peak10, (await measure(process.execPath, platArgs(1000))).peakKiB / 1024);
  const overhead = median(overheads);
  const ratio = median(ratios);
  rows.push({
    figure: "1,000 pages of 100 items, --paginate --ndjson > /dev/null: plat's time per page beyond the server's",
    target: '≤ 2 ms',
    measured: `${overhead.toFixed(2)} ms`,
    ok: overhead <= 2,
    detail: `plat ${median(platMs).toFixed(0)} ms for 1,000 pages (median of ${runs})`,
  });
  rows.push({
    figure: 'the same / a minimal Node loop making the same requests',
    target: '≤ 1.2',
    measured: ratio.toFixed(2),
    ok: ratio <= 1.2,
    detail: `plat ${median(platMs).toFixed(0)} ms, loop ${median(loopMs).toFixed(0)} ms`,
  });
  if (platCpu.length) {
    const cpuRatio = median(platCpu.map((c, i) => c / loopCpu[i]));
    rows.push({
      figure: 'the same, CPU time (user + system) / the loop\'s',
      target: '≤ 1.2',
      measured: cpuRatio.toFixed(2),
      ok: cpuRatio <= 1.2,
      detail: `plat ${(median(platCpu) * 1000).toFixed(0)} ms, loop ${(median(loopCpu) * 1000).toFixed(0)} ms of CPU: ${(((median(platCpu) - median(loopCpu)) * 1000) / 1000).toFixed(2)} ms more per page${extraCaNote}`,
    });
  }
  rows.push({
    figure: '--paginate --ndjson: peak RSS for 10 / 1,000 pages',
    target: '≤ 80 MiB, flat',
    measured: `${peak10.toFixed(1)} / ${peak1000.toFixed(1)} MiB`,
    ok: peak10 <= 80 && peak1000 <= 80,
  });
  return { runs, platMs, loopMs, overheadsMs: overheads, platCpuS: platCpu, loopCpuS: loopCpu, peak10MiB: peak10, peak1000MiB: peak1000 };
}
