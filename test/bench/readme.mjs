// Writes the latest figures into test/bench/README.md, between its two markers, from test/bench/results.json: the
// table is the benchmark's output, never typed by hand. run.mjs calls it after each run that writes results.json;
// `node test/bench/readme.mjs` renders it again from the results.json there is (no measuring).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BEGIN = '<!-- results: written by test/bench/readme.mjs from results.json; do not edit by hand -->';
export const END = '<!-- /results -->';

/** The figures of one results.json as Markdown: when and where they were measured, then one row per figure. */
export function renderResults(results) {
  const when = (iso) => iso.slice(0, 10);
  const lines = [
    `Measured ${when(results.date)} on ${results.machine}, Node ${results.node.replace(/^v/, '')}; token stores: ${results.tokenStores.join(', ')}. ${capitalise(results.note)}.`,
  ];
  const later = [
    results.hostileMeasuredAt && `the hostile-server rows on ${when(results.hostileMeasuredAt)} (\`--hostile-only\`)`,
    results.batchMeasuredAt && `the \`plat batch\` rows on ${when(results.batchMeasuredAt)} (\`--batch-only\`)`,
    results.mcpMeasuredAt && `the \`plat mcp\` rows on ${when(results.mcpMeasuredAt)} (\`--mcp-only\`)`,
    results.batchOpsMeasuredAt && results.batchOpsMeasuredAt !== results.batchMeasuredAt && `the \`plat batch\` op-line rows on ${when(results.batchOpsMeasuredAt)} (\`--batch-ops-only\`)`,
    results.proxyMeasuredAt && `the \`plat proxy\` rows on ${when(results.proxyMeasuredAt)} (\`--proxy-only\`)`,
    results.startupMeasuredAt && `the start-up rows and the 512 MiB download's CPU on ${when(results.startupMeasuredAt)} (\`--startup-rows-only\`; ${results.startupNote})`,
  ].filter(Boolean);
  if (later.length > 0) lines.push(`Measured again since: ${later.join('; ')}.`);
  lines.push('', '| figure | target | measured | met |', '| --- | --- | --- | --- |');
  for (const r of results.rows) {
    // A start-up row's detail names its CPU-time ratio (cpuRatio) already.
    const measured = r.measured === null ? `n/a: ${r.note}` : `${r.measured}${r.detail ? `: ${r.detail}` : ''}${r.before ? `; before issue 42's change: ${r.before}` : ''}`;
    lines.push(`| ${cell(r.figure)} | ${cell(r.target)} | ${cell(measured)} | ${r.ok === undefined ? '-' : r.ok ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}

/** README text with the part between the markers replaced by these results. */
function withResults(readme, results) {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start === -1 || end < start) throw new Error(`test/bench/README.md needs the markers ${BEGIN} and ${END}`);
  return `${readme.slice(0, start + BEGIN.length)}\n${renderResults(results)}\n${readme.slice(end)}`;
}

export async function writeBenchReadme(results) {
  const file = path.join(here, 'README.md');
  const latest = results ?? JSON.parse(await readFile(path.join(here, 'results.json'), 'utf8'));
  await writeFile(file, withResults(await readFile(file, 'utf8'), latest));
}

function cell(text) {
  return String(text).replace(/\|/g, '\\|');
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await writeBenchReadme();
