// `npm run demo`: the whole journey against the built-in sandbox platform. Starts the reference platform, then
// runs login → whoami → call (one response, then every page of a list with --paginate --jq) → refresh → logout
// with the built CLI, printing each command and what it printed.
// With a display, consent happens in your real browser; without one, a headless client clicks Approve for you.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPlatform } from './platform/index.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const plat = path.join(root, 'bin', 'plat.js');
const hasDisplay = process.platform === 'darwin' || process.platform === 'win32' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const headless = !hasDisplay || process.env.CI || process.env.PLAT_DEMO_HEADLESS === '1';

const bold = (s) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[22m` : s);
const dim = (s) => (process.stdout.isTTY ? `\u001b[2m${s}\u001b[22m` : s);

const platform = await startPlatform();
const configDir = await mkdtemp(path.join(os.tmpdir(), 'plat-demo-'));
const env = { ...process.env, PLAT_CONFIG_DIR: configDir, PLAT_PROFILE: 'demo' };
for (const key of ['PLAT_TOKEN', 'PLAT_BASE_URL', 'PLAT_BROWSER']) delete env[key];
if (headless) env.PLAT_BROWSER = `"${process.execPath}" "${path.join(root, 'test', 'platform', 'approve-browser.mjs')}"`;

console.log(bold(`Sandbox platform running at ${platform.baseUrl}`));
console.log(dim(headless ? 'No display: consent is approved by a headless client.\n' : 'Approve the consent page in your browser when it opens.\n'));

const steps = [
  { args: ['login', '--base-url', platform.baseUrl, '--scope', 'courses:read', '--scope', 'profile email'], expect: 0 },
  { args: ['whoami'], expect: 0 },
  { args: ['call', 'GET', '/api/courses'], expect: 0 },
  {
    args: ['call', 'GET', '/api/lists/link', '--paginate', '--jq', 'map(select(.public)) | "\\(length) public courses; the last is \\(.[-1].title)"'],
    expect: 0,
    note: 'every page (Link headers), merged and filtered with the built-in jq',
  },
  { args: ['call', 'GET', '/api/lists/cursor', '--paginate', '--ndjson', '--max-items', '3', '--jq', '{id, title}'], expect: 0, note: 'one item per line as pages arrive' },
  { args: ['call', 'GET', '/api/analytics'], expect: 5, note: 'a scope the session lacks: exit 5 and the step-up hint' },
  { args: ['refresh'], expect: 0 },
  { args: ['status'], expect: 0 },
  { args: ['logout'], expect: 0 },
  { args: ['call', 'GET', '/api/courses'], expect: 0, note: 'after logout the platform serves the call anonymously' },
];

let failed = false;
try {
  for (const step of steps) {
    console.log(bold(`$ plat ${step.args.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ')}`) + (step.note ? dim(`   # ${step.note}`) : ''));
    const code = await run(step.args);
    if (code !== step.expect) {
      console.log(`\n✗ expected exit ${step.expect}, got ${code}`);
      failed = true;
      break;
    }
    console.log(dim(`  (exit ${code})\n`));
  }
} finally {
  await platform.close();
  await rm(configDir, { recursive: true, force: true });
}
if (!failed) console.log(bold('✓ The whole journey ran. Try it by hand: npm run sandbox, then the login command it prints.'));
process.exitCode = failed ? 1 : 0;

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [plat, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('close', (code) => resolve(code));
  });
}
