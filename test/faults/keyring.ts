/**
 * A private Secret Service for one test file: its own dbus-daemon (no service activation, so nothing starts behind
 * the test's back) and its own gnome-keyring-daemon with a "login" collection unlocked by a password, in a
 * throwaway directory. The test can lock the collection over D-Bus (as a screen lock does), unlock it (by
 * restarting the daemon with the password, as a desktop login does), freeze the daemon (SIGSTOP: a keychain that
 * never answers), or kill the bus under a running plat. Only processes started here are signalled, by their pid.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { scaled } from '../helpers/time.js';

const PASSWORD = 'plat-faults';

export interface PrivateKeyring {
  /** DBUS_SESSION_BUS_ADDRESS and friends, for plat's environment. */
  env: Record<string, string | undefined>;
  lock(): void;
  unlock(): Promise<void>;
  freeze(): void;
  thaw(): void;
  killBus(): Promise<void>;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startPrivateKeyring(): Promise<PrivateKeyring> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-kr-'));
  const run = path.join(dir, 'run');
  await mkdir(run, { mode: 0o700 });
  await mkdir(path.join(dir, 'data'), { mode: 0o700 });
  const config = path.join(dir, 'bus.conf');
  await writeFile(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=${run}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
`,
  );
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_RUNTIME_DIR: run, LANG: 'C.UTF-8' };
  const bus = spawn('dbus-daemon', ['--config-file', config, '--nofork', '--print-address=1'], { env: base, stdio: ['ignore', 'pipe', 'ignore'] });
  const address = await new Promise<string>((resolve, reject) => {
    bus.stdout!.once('data', (d) => resolve(String(d).trim()));
    bus.once('exit', () => reject(new Error('dbus-daemon did not start')));
  });
  const busEnv = { ...base, DBUS_SESSION_BUS_ADDRESS: address };

  const send = (...args: string[]) => spawnSync('dbus-send', ['--session', '--print-reply', ...args], { env: busEnv, encoding: 'utf8' });
  const hasOwner = () => send('--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.NameHasOwner', 'string:org.freedesktop.secrets').stdout.includes('boolean true');

  let daemon: ChildProcess | undefined;
  const startDaemon = async () => {
    daemon = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], { env: busEnv, stdio: ['pipe', 'ignore', 'ignore'] });
    daemon.stdin!.end(PASSWORD);
    const deadline = Date.now() + scaled(5_000);
    while (!hasOwner() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    if (!hasOwner()) throw new Error('gnome-keyring-daemon did not take org.freedesktop.secrets');
  };
  const stopDaemon = async () => {
    if (!daemon) return;
    daemon.kill('SIGCONT');
    daemon.kill('SIGTERM');
    await exited(daemon);
    daemon = undefined;
  };
  await startDaemon();

  return {
    env: { DBUS_SESSION_BUS_ADDRESS: address, GNOME_KEYRING_CONTROL: undefined, DISPLAY: undefined, WAYLAND_DISPLAY: undefined },
    lock() {
      const result = send('--dest=org.freedesktop.secrets', '/org/freedesktop/secrets', 'org.freedesktop.Secret.Service.Lock', 'array:objpath:/org/freedesktop/secrets/collection/login');
      if (result.status !== 0) throw new Error(`could not lock the keyring: ${result.stderr}`);
    },
    async unlock() {
      await stopDaemon();
      await startDaemon();
    },
    freeze() {
      daemon?.kill('SIGSTOP');
    },
    thaw() {
      daemon?.kill('SIGCONT');
    },
    async killBus() {
      bus.kill('SIGKILL');
      await exited(bus);
      // gnome-keyring ends with its bus; make sure of it
      const d = daemon;
      if (d) await Promise.race([exited(d), new Promise((resolve) => setTimeout(resolve, 2_000))]);
      await stopDaemon();
    },
    async stop() {
      await stopDaemon();
      bus.kill('SIGTERM');
      await exited(bus);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
