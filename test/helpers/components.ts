/**
 * Which real components (a keychain, a browser) this test run has, and how a test that needs one is gated:
 * without the component a test is skipped with a name that says why and how to install it, except in CI (CI is
 * set), where nothing may be skipped and the test fails instead. A component this machine has but this run did
 * not start (the keychain, when a file is run with vitest directly instead of test/run.mjs) is never skipped: its
 * tests fail with the command that runs them properly.
 *
 *   describe.skipIf(keyring.skip)(keyring.title('real keychain'), () => {
 *     beforeEach(() => keyring.require());   // beforeEach, so that in CI each test fails (a failed
 *     ...                                    // beforeAll would only mark them skipped)
 *   });
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export const isCI = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';

export interface Component {
  /** What the test needs, for messages. */
  readonly name: string;
  readonly available: boolean;
  /** Why it is missing and how to get it; empty when available. */
  readonly skipReason: string;
  /** The command that installs it on Debian/Ubuntu. */
  readonly install: string;
  /** Skip tests that need it: only when this machine cannot have it and this is not CI. */
  readonly skip: boolean;
  /** The test name with the skip reason appended when it will be skipped. */
  title(name: string): string;
  /** Throws (failing the test) when the component is missing; call it in beforeEach of a gated block. */
  require(): void;
}

/** `installed: true` for a component the machine has but this run did not start: its tests fail instead of skipping. */
function component(name: string, available: boolean, skipReason: string, install: string, installed = false): Component {
  const skip = !available && !isCI && !installed;
  return {
    name,
    available,
    skipReason: available ? '' : skipReason,
    install,
    skip,
    title: (title) => (available ? title : `${title} (${skip ? 'skipped' : 'missing'}: ${skipReason})`),
    require() {
      if (available) return;
      if (installed) throw new Error(`${name} is installed but was not started for this run: ${skipReason}`);
      throw new Error(`CI must not skip tests, but ${name} is not available here: ${skipReason}`);
    },
  };
}

export function onPath(command: string): boolean {
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

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const KEYRING_INSTALL = 'apt-get install -y gnome-keyring dbus libsecret-1-0';
const CHROMIUM_INSTALL = 'apt-get install -y chromium';
const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * A real Secret Service (gnome-keyring) on a private session bus. test/run.mjs (npm test) starts one and sets
 * PLAT_TEST_KEYRING=1; tests must not touch a developer's own keychain otherwise.
 */
export const keyring = (() => {
  const started = process.env.PLAT_TEST_KEYRING === '1';
  const installed = onPath('gnome-keyring-daemon') && onPath('dbus-run-session');
  const reason = installed
    ? 'run this file with `node test/run.mjs <file>` (or `npm test -- <file>`), which starts a private gnome-keyring, not with vitest directly'
    : `no gnome-keyring; install with: ${KEYRING_INSTALL}`;
  return component('gnome-keyring (Secret Service)', started, reason, KEYRING_INSTALL, installed);
})();

/** Debian's chromium, driven by playwright-core for the end-to-end browser journey. */
export const chromium = Object.assign(
  component(
    'chromium',
    executable(CHROMIUM_PATH),
    `no chromium at ${CHROMIUM_PATH}; install with: ${CHROMIUM_INSTALL}`,
    CHROMIUM_INSTALL,
  ),
  { path: CHROMIUM_PATH },
);

const OPENSSL_INSTALL = 'apt-get install -y openssl';

/** openssl, to make a throwaway certificate for an https reference platform. */
export const openssl = component('openssl', onPath('openssl'), `no openssl on PATH; install with: ${OPENSSL_INSTALL}`, OPENSSL_INSTALL);

const PYTHON_REQUESTS_INSTALL = 'apt-get install -y python3 python3-requests';
/** Python with `requests`, for the proxy example of plat help scripting. */
export const pythonRequests = component(
  'python3 with requests',
  onPath('python3') && spawnSync('python3', ['-c', 'import requests'], { stdio: 'ignore' }).status === 0,
  `no python3 with the requests module; install with: ${PYTHON_REQUESTS_INSTALL}`,
  PYTHON_REQUESTS_INSTALL,
);

const HTTPIE_INSTALL = 'apt-get install -y httpie';
/** httpie (`http`), for the proxy's joining examples of plat help scripting. */
export const httpie = component('httpie', onPath('http'), `no httpie (http) on PATH; install with: ${HTTPIE_INSTALL}`, HTTPIE_INSTALL);

const WGET_INSTALL = 'apt-get install -y wget';
/** wget, for the proxy's joining examples of plat help scripting. */
export const wget = component('wget', onPath('wget'), `no wget on PATH; install with: ${WGET_INSTALL}`, WGET_INSTALL);
