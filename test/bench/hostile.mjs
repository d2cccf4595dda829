// Peak RSS of plat against what a hostile server sends (issue 23), each input at 1x, 10x and 100x: an API
// description whose $refs multiply (100 / 1,000 / 10,000 operations), next cursors of 1 MiB (2 / 20 / 200 pages),
// one page of tiny items under --ndjson (0.32 / 3.2 / 32 MiB), and a body for --jq (1 / 10 / 100 MiB; past 8 MiB
// plat refuses it, as soon as it has read that far). A bound holds when the 100x figure is within it. From 1x to
// 10x the heap grows to V8's first collection threshold (large strings — a 1 MiB cursor, a page — are freed only by
// a major collection); from 10x to 100x it stays nearly flat. The page row also grows by the page's own bytes,
// which plat holds while it reads the page (64 MiB at most).
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const MiB = 1024 * 1024;

export async function benchHostile({ plat, measure, rows, env }) {
  const server = createServer({ maxHeaderSize: 4 * MiB }, route);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-bench-hostile-'));
  // Anonymous calls to the bench's own server: no session needed; each run has an empty config dir (no cache).
  let run = 0;
  const peak = async (args) => {
    const result = await measure(process.execPath, [plat, ...args], { env: { ...env, PLAT_CONFIG_DIR: path.join(dir, String(run++)) }, anyExit: true });
    return result.peakKiB / 1024;
  };
  const figures = {};
  try {
    const series = async (name, bound, inputs, args) => {
      const peaks = [];
      for (const input of inputs) peaks.push(await peak(args(input)));
      figures[name] = peaks;
      rows.push({
        figure: `${name}: peak RSS at 1x / 10x / 100x`,
        target: `≤ ${bound} MiB`,
        measured: peaks.map((p) => p.toFixed(1)).join(' / ') + ' MiB',
        ok: Math.max(...peaks) <= bound,
      });
    };
    await series('an API description whose $refs multiply (100 / 1,000 / 10,000 operations)', 160, [100, 1_000, 10_000], (n) => ['op', '--refresh', `--base-url`, `${base}/refs-${n}`]);
    await series('next cursors of 1 MiB (2 / 20 / 200 pages) --paginate --ndjson', 150, [2, 20, 200], (n) => ['call', 'GET', `${base}/cursors-${n}`, '--paginate', '--ndjson']);
    await series('one page of tiny items (0.32 / 3.2 / 32 MiB) --paginate --ndjson', 200, [0.32, 3.2, 32], (n) => ['call', 'GET', `${base}/page-${n}`, '--paginate', '--ndjson']);
    await series('a body for --jq (1 / 10 / 100 MiB; refused past 8 MiB)', 300, [1, 10, 100], (n) => ['call', 'GET', `${base}/jq-${n}`, '--jq', 'length']);
  } finally {
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
  return figures;
}

const documents = new Map();
function multiplying(operations) {
  if (documents.has(operations)) return documents.get(operations);
  const schemas = {};
  for (let i = 0; i < 30; i++) {
    const next = { $ref: `#/components/schemas/S${i + 1}` };
    schemas[`S${i}`] = { type: 'object', properties: { a: next, b: next } };
  }
  const paths = {};
  for (let i = 0; i < operations; i++) {
    paths[`/m${i}`] = { post: { operationId: `m${i}`, requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } } } } };
  }
  const text = JSON.stringify({ openapi: '3.1.0', info: { title: 'refs', version: '1' }, paths, components: { schemas } });
  documents.set(operations, text);
  return text;
}

const ITEM = '{"i":1}';
function route(req, res) {
  const url = new URL(req.url, 'http://x');
  const send = (text) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(text);
  };
  let m;
  if ((m = /^\/refs-(\d+)\/openapi\.json$/.exec(url.pathname))) return send(multiplying(Number(m[1])));
  if ((m = /^\/cursors-(\d+)$/.exec(url.pathname))) {
    const n = Number(/^(\d+)/.exec(url.searchParams.get('cursor') ?? '0')[1]);
    return send(JSON.stringify({ items: [n], next_cursor: n + 1 < Number(m[1]) ? `${n + 1}${'x'.repeat(MiB)}` : null }));
  }
  if ((m = /^\/page-([\d.]+)$/.exec(url.pathname))) {
    const count = Math.floor((Number(m[1]) * MiB) / (ITEM.length + 1));
    return send(`{"items":[${Array(count).fill(ITEM).join(',')}],"next":null}`);
  }
  if ((m = /^\/jq-(\d+)$/.exec(url.pathname))) {
    // Streamed in 1 MiB pieces, without Content-Length: the bench's own memory stays small.
    const pieces = Number(m[1]);
    const piece = Array(Math.floor(MiB / (ITEM.length + 1))).fill(ITEM).join(',');
    res.writeHead(200, { 'content-type': 'application/json' });
    let i = 0;
    const more = () => {
      while (i < pieces) {
        const text = `${i === 0 ? '[' : ','}${piece}${i === pieces - 1 ? ']' : ''}`;
        i++;
        if (!res.write(text)) return res.once('drain', more);
      }
      res.end();
    };
    res.on('error', () => {});
    return more();
  }
  res.writeHead(404).end();
}
