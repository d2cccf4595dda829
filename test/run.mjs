#!/usr/bin/env node
/**
 * `npm test`: runs vitest with the real components the tests need.
 *
 * - If dbus-run-session and gnome-keyring-daemon exist, vitest runs on a private D-Bus session with a fresh,
 *   unlocked gnome-keyring (PLAT_TEST_KEYRING=1), so keychain tests use a real Secret Service and never the
 *   developer's own keychain. Otherwise vitest runs directly and those tests are skipped (or, with CI set, fail).
 *   D-Bus starts that keyring from a service file of the run's own, and starts it again should it end mid-run
 *   (keyringByActivation); the run's last lines say so when it did.
 * - HOME, the XDG dirs and TMPDIR point into a throwaway directory, removed afterwards.
 * - NODE_EXTRA_CA_CERTS is not inherited: it costs each Node process ~50 ms of start-up (see below).
 * - Extra arguments go to vitest: `npm test -- test/unit/store`, `node test/run.mjs -t lock`.
 * - `--changed [ref]`: only the tests the change touches (test/changed.mjs says how they are found).
 * - The last line printed is `N passed, N failed, N skipped`; the exit status is non-zero if anything failed.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { vitestCommand } from './changed.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const isCI = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';

/** stderr lines from the test harness's own daemons that say nothing about the tests. */
const NOISE = [
  /Failed to set fd limit/,
  /Unable to set up transient service directory/,
  /^discover_other_daemon: /,
  /gnome-keyring-daemon: insufficient process capabilities/,
  // The test bus starting its Secret Service (counted, and reported at the end when it happened more than once).
  /Activating service name='org\.freedesktop\.secrets'/,
  /Successfully activated service 'org\.freedesktop\.secrets'/,
  // gnome-keyring unlocking a keyring whose items it has registered already.
  /asked to register item \S+, but it's already registered/,
];

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      // keep looking
    }
  }
  return false;
}

function hasLibsecret() {
  if (process.platform !== 'linux') return false;
  const dirs = ['/usr/lib', '/usr/lib64', '/lib', '/lib64', '/usr/local/lib'];
  for (const base of ['/usr/lib', '/lib']) {
    try {
      for (const entry of readdirSync(base)) if (entry.endsWith('-linux-gnu')) dirs.push(path.join(base, entry));
    } catch {
      // no such dir
    }
  }
  return dirs.some((dir) => existsSync(path.join(dir, 'libsecret-1.so.0')));
}

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const components = [
  { name: 'dbus-run-session', pkg: 'dbus', ok: onPath('dbus-run-session'), keyring: true },
  { name: 'gnome-keyring-daemon', pkg: 'gnome-keyring', ok: onPath('gnome-keyring-daemon'), keyring: true },
  { name: 'libsecret', pkg: 'libsecret-1-0', ok: hasLibsecret(), keyring: true },
  { name: 'chromium (/usr/bin/chromium)', pkg: 'chromium', ok: executable('/usr/bin/chromium'), keyring: false },
];
const missing = components.filter((c) => !c.ok);
const canStartKeyring = components.filter((c) => c.keyring && c.name !== 'libsecret').every((c) => c.ok);

function reportMissing(when) {
  if (missing.length === 0) return;
  const affected = [];
  if (missing.some((c) => c.keyring)) affected.push('the real-keychain tests');
  if (missing.some((c) => !c.keyring)) affected.push('the browser end-to-end test');
  const what = when === 'before' ? (isCI ? 'will FAIL (CI skips nothing)' : 'will be skipped') : isCI ? 'failed (CI skips nothing)' : 'were skipped';
  const lines = [
    `test.mjs: missing: ${missing.map((c) => c.name).join(', ')}; ${affected.join(' and ')} ${what}.`,
    `test.mjs: install with: apt-get install -y ${missing.map((c) => c.pkg).join(' ')}`,
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** Forwards a child's stderr line by line, minus the harness noise. */
/** Lines in which the test bus's dbus-daemon starts a Secret Service (see keyringByActivation). */
const KEYRING_STARTED = /Activating service name='org\.freedesktop\.secrets'/;

/** Passes stderr on without NOISE; `onLine` sees every line. */
function filterStderr(stream, onLine = () => undefined) {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      onLine(line);
      if (!NOISE.some((re) => re.test(line))) process.stderr.write(`${line}\n`);
    }
  });
  stream.on('end', () => {
    if (pending && !NOISE.some((re) => re.test(pending))) process.stderr.write(pending);
  });
}

/**
 * The test bus's Secret Service, started by D-Bus activation from a service file of the run's own: a gnome-keyring
 * daemon in the foreground, unlocked with the run's password, its messages on the bus's stderr (so in the run's log).
 * Should the daemon end during the run (GLib has twice stopped gnome-keyring 42 with a trap in CI here, and D-Bus then
 * started Debian's own service, locked, failing every keychain test after it), the next request starts it again
 * the same way, on the same keyring on disk; the run says how often at its end. Returns the dbus-run-session
 * arguments for it, or undefined where there is no session.conf to build on (then the daemon is started once).
 */
async function keyringByActivation(home) {
  const base = ['/usr/share/dbus-1/session.conf', '/etc/dbus-1/session.conf'].find((file) => existsSync(file));
  if (!base || !onPath('dbus-send')) return undefined;
  const dir = path.join(home, 'dbus');
  const services = path.join(dir, 'services');
  await mkdir(services, { recursive: true, mode: 0o700 });
  const daemon = path.join(dir, 'gnome-keyring.sh');
  await writeFile(daemon, 'printf plat-test | exec gnome-keyring-daemon --foreground --unlock --components=secrets\n');
  // Both names the daemon owns, so a request for either starts this one rather than the system's.
  for (const name of ['org.freedesktop.secrets', 'org.gnome.keyring']) {
    await writeFile(path.join(services, `${name}.service`), `[D-BUS Service]\nName=${name}\nExec=/bin/sh ${daemon}\n`);
  }
  const config = path.join(dir, 'session.conf');
  // Listed before the standard directories, which the included file adds: the first one that has a name wins.
  await writeFile(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <servicedir>${services}</servicedir>
  <include>${base}</include>
</busconfig>
`,
  );
  return [`--config-file=${config}`];
}

/** Counts from vitest's JSON report; a file that failed outside any test (import error, hook) counts as one. */
function countResults(report) {
  let failed = report.numFailedTests ?? 0;
  for (const file of report.testResults ?? []) {
    const failedTests = (file.assertionResults ?? []).filter((t) => t.status === 'failed').length;
    if (file.status === 'failed' && failedTests === 0) failed++;
  }
  return {
    passed: report.numPassedTests ?? 0,
    failed,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

async function main() {
  const userArgs = process.argv.slice(2);
  const selected = vitestCommand(userArgs, root);
  if (!selected) {
    process.stderr.write('test.mjs: --changed: no file changed, so no test to run.\n');
    process.stdout.write('0 passed, 0 failed, 0 skipped\n');
    return;
  }
  const home = await mkdtemp(path.join(os.tmpdir(), 'plat-test-home-'));
  // Where tests put a world-readable copy of the CLI for runs as another user (test/helpers/readable-copy.ts):
  // outside the private home, and removed with it.
  const shared = await mkdtemp(path.join(process.platform === 'linux' ? '/tmp' : os.tmpdir(), 'plat-test-shared-'));
  await chmod(shared, 0o755);
  let exitCode = 1;
  let summary = '0 passed, 1 failed, 0 skipped';
  try {
    const dirs = {
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_RUNTIME_DIR: path.join(home, 'run'),
      TMPDIR: path.join(home, 'tmp'),
    };
    for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true, mode: 0o700 });

    const env = { ...process.env, HOME: home, USERPROFILE: home, ...dirs };
    // A developer's own plat settings must not leak into the tests.
    for (const key of Object.keys(env)) if (key.startsWith('PLAT_')) delete env[key];
    env.PLAT_TEST_SHARED_DIR = shared;
    // `npm run coverage` (test/coverage.mjs): where each plat the tests spawn writes its V8 coverage.
    if (process.env.PLAT_TEST_V8_COVERAGE) env.PLAT_TEST_V8_COVERAGE = process.env.PLAT_TEST_V8_COVERAGE;
    // The time factor a person chose for a busy machine (test/helpers/time.ts).
    if (process.env.PLAT_TEST_TIME_SCALE) env.PLAT_TEST_TIME_SCALE = process.env.PLAT_TEST_TIME_SCALE;
    // Regenerating the definitions' goldens (test/ui/definitions.test.ts), as that test's comment says to.
    if (process.env.PLAT_WRITE_GOLDENS) env.PLAT_WRITE_GOLDENS = process.env.PLAT_WRITE_GOLDENS;
    // An inherited NODE_EXTRA_CA_CERTS (machines here export the system bundle) makes every Node process read and
    // parse that file before its first line: `node -e 0` takes ~80 ms with it and ~30 ms without (medians on a
    // 2-core machine), and the suite starts thousands of Node processes (each plat it spawns, each worker). No plat
    // under test talks to a public server, and the one test that needs a CA (test/faults/https.test.ts) sets its
    // own. npm may reach the registry (test/library/install.test.ts): npmEnv() (test/helpers/package.ts) gives it the
    // host's value back from PLAT_TEST_HOST_CA_CERTS (plat's spawned tests drop PLAT_* variables).
    if (env.NODE_EXTRA_CA_CERTS) env.PLAT_TEST_HOST_CA_CERTS = env.NODE_EXTRA_CA_CERTS;
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.DBUS_SESSION_BUS_ADDRESS;
    delete env.GNOME_KEYRING_CONTROL;

    const reportFile = path.join(home, 'vitest-report.json');
    const vitest = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
    const vitestArgs = [
      vitest,
      ...selected,
      '--config',
      path.join(root, 'test', 'vitest.config.ts'),
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${reportFile}`,
    ];

    let command;
    let args;
    const activation = canStartKeyring ? await keyringByActivation(home) : undefined;
    if (canStartKeyring) {
      process.stderr.write('test.mjs: running vitest on a private D-Bus session with a fresh gnome-keyring\n');
      // Started by activation (keyringByActivation) where the run could set that up, else once, daemonized.
      const start = activation
        ? 'dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null'
        : 'out=$(printf plat-test | gnome-keyring-daemon --unlock --components=secrets) && eval "$out" && export GNOME_KEYRING_CONTROL';
      const shell = [
        `if ${start}; then`,
        '  export PLAT_TEST_KEYRING=1',
        'else',
        '  echo "test.mjs: gnome-keyring-daemon did not start; the real-keychain tests cannot run" >&2',
        'fi',
        '"$@"',
      ].join('\n');
      command = 'dbus-run-session';
      args = [...(activation ?? []), '--', 'sh', '-c', shell, 'sh', process.execPath, ...vitestArgs];
    } else {
      command = process.execPath;
      args = vitestArgs;
    }
    reportMissing('before');

    const child = spawn(command, args, { cwd: root, env, stdio: ['inherit', 'inherit', 'pipe'] });
    let keyringStarts = 0;
    filterStderr(child.stderr, (line) => {
      if (KEYRING_STARTED.test(line)) keyringStarts++;
    });
    // Ctrl-C reaches vitest through the terminal's process group; stay alive to clean up after it.
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', forward);
    const [code, signal] = await new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c, s) => resolve([c, s]));
    });

    let report;
    try {
      report = JSON.parse(await readFile(reportFile, 'utf8'));
    } catch {
      process.stderr.write('test.mjs: vitest wrote no report (it crashed or was interrupted); counting that as a failure\n');
    }
    if (report) {
      const { passed, failed, skipped } = countResults(report);
      summary = `${passed} passed, ${failed} failed, ${skipped} skipped`;
      exitCode = failed > 0 || code !== 0 ? code || 1 : 0;
    } else {
      exitCode = signal === 'SIGINT' ? 130 : code || 1;
    }
    if (keyringStarts > 1) {
      process.stderr.write(
        `test.mjs: the test bus's gnome-keyring-daemon ended during the run and was started again ${keyringStarts - 1} time(s), unlocked, on the same keyring; its messages, and any test that was using it then, are above\n`,
      );
    }
    reportMissing('after');
  } finally {
    await rm(home, { recursive: true, force: true }).catch(() => undefined);
    await rm(shared, { recursive: true, force: true }).catch(() => undefined);
  }
  process.stdout.write(`${summary}\n`);
  process.exitCode = exitCode;
}

main().catch((error) => {
  process.stderr.write(`test.mjs: ${error?.stack ?? error}\n`);
  process.stdout.write('0 passed, 1 failed, 0 skipped\n');
  process.exitCode = 1;
});
