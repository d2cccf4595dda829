// `npm run bench`'s plat mcp row (called by run.mjs, which owns the platform and the login): how long an agent host
// waits from starting `plat mcp` to the answer of its first tools/list, as a host starts it (initialize,
// initialized, tools/list written at once), beside another command started and ended the same way: `node -e 0`, or
// `plat op` listing the operations (the contract's bound: plat mcp answers within 1.5x of that).

const MESSAGES = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
];

/**
 * Interleaved runs (plat mcp, then `versus`, by default bare node) after a warm-up (code cache, the cached /openapi.json); the medians of
 * both and of their pairwise ratios. The clock stops when the tools/list answer arrives; the server is then ended by
 * closing its stdin, as a host does.
 */
export async function benchMcpStartup({ plat, env, spawn, median, runs, warmup, versus = [process.execPath, '-e', '0'] }) {
  const firstList = () =>
    new Promise((resolve, reject) => {
      const start = process.hrtime.bigint();
      const child = spawn(process.execPath, [plat, 'mcp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      let ms;
      child.stdout.setEncoding('utf8').on('data', (d) => {
        out += d;
        if (ms === undefined && /"id":2[,}]/.test(out) && /"tools":\[/.test(out)) {
          ms = Number(process.hrtime.bigint() - start) / 1e6;
          child.stdin.end();
        }
      });
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => (code === 0 && ms !== undefined ? resolve(ms) : reject(new Error(`plat mcp exited ${code} before answering tools/list: ${err}`))));
      child.stdin.write(`${MESSAGES.map((m) => JSON.stringify(m)).join('\n')}\n`);
    });
  const bare = () =>
    new Promise((resolve, reject) => {
      const start = process.hrtime.bigint();
      const child = spawn(versus[0], versus.slice(1), { env, stdio: 'ignore' });
      child.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - start) / 1e6) : reject(new Error(`${versus.join(' ')} exited ${code}`))));
    });
  for (let i = 0; i < warmup; i++) {
    await firstList();
    await bare();
  }
  const mcp = [];
  const node = [];
  const ratios = [];
  for (let i = 0; i < runs; i++) {
    const a = await firstList();
    const b = await bare();
    mcp.push(a);
    node.push(b);
    ratios.push(a / b);
  }
  return { median: median(ratios), aMs: median(mcp), bMs: median(node) };
}
