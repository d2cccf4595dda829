/**
 * Reads one keytar entry straight from the Secret Service (gnome-keyring, KeePassXC …) over the session bus, in
 * plain JS: 4 messages in 2 round trips, ≈ 1 ms of bus time, where keytar costs ≈ 18 ms (loading its native
 * libraries, then 11 sequential D-Bus calls including a Diffie-Hellman session setup; issue 16's figures). Side by
 * side with main this takes 9–11 ms of CPU off every keychain command (test/bench/README.md). It only ever reads:
 * keytar writes, deletes, and answers every read this cannot answer for certain. test/cli/keychain-read.test.ts
 * fails if the built CLI stops reading this way.
 *
 * The session is "plain", as go-keyring's (which gh uses): the secret crosses the user's session bus unencrypted.
 * That bus is private to the user; anything able to watch it runs as that user (or root) and could ask the keyring
 * for the secret itself, so the Diffie-Hellman session would hide it from nobody who can see it, and costs most of
 * the time saved. `plat help security` (the security model) says this.
 */
import type { DBusConnection, DBusValue } from './dbus.js';
import { decodeKeytarSecret, keytarAttributes } from './keytar-item.js';
import { socketPathOf } from './session-bus.js';

const SECRETS = 'org.freedesktop.secrets';
const SERVICE_PATH = '/org/freedesktop/secrets';

/**
 * keytar's password for (service, account): the string, `null` when there is certainly no such entry, or
 * `undefined` when only keytar can tell (the item is locked, so reading it needs an unlock prompt, or several items
 * match and keytar's choice among them is libsecret's). Throws on any failure (no bus, no Secret Service, an error
 * reply, `signal` aborted); the caller then asks keytar, which reports the problem in its own words.
 */
export type SecretReader = (service: string, account: string, signal: AbortSignal) => Promise<string | null | undefined>;

/**
 * A SecretReader for the session bus named in `env` (DBUS_SESSION_BUS_ADDRESS), or undefined where there is no
 * such bus address plat can reach itself (not Linux, no address, a non-unix transport), or where libsecret may keep
 * keytar's entries somewhere else than the bus (see mayUseLibsecretFile): keytar then reads alone.
 */
export function secretServiceReader(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform,
  options: { kept?: BusConnections; sandboxed?: boolean } = {},
): SecretReader | undefined {
  if (platform === 'darwin' || platform === 'win32') return undefined;
  const socketPath = socketPathOf(env.DBUS_SESSION_BUS_ADDRESS);
  if (!socketPath) return undefined;
  if (mayUseLibsecretFile(env, options.sandboxed ?? inFlatpak())) return undefined;
  return (service, account, signal) => readPassword(socketPath, service, account, signal, options.kept);
}

/**
 * Whether keytar's libsecret may store in its own file (~/.local/share/keyrings/default.keyring, or the sandbox's)
 * rather than in the Secret Service: always with SECRET_BACKEND=file, and inside a Flatpak sandbox whenever the
 * secret portal is there (libsecret ≥ 0.20 then ignores SECRET_BACKEND; whether the portal is there only libsecret
 * finds out). There, what the bus says is not keytar's answer: "not found" may be an entry in the file, and an item
 * found may be an old one the file has since replaced. So the direct read stands aside and keytar reads alone.
 */
export function mayUseLibsecretFile(env: Record<string, string | undefined>, sandboxed: boolean): boolean {
  if (sandboxed) return true;
  return env.SECRET_BACKEND?.trim() === 'file';
}

/** libsecret's own test for a Flatpak sandbox: the file every Flatpak app sees at /.flatpak-info. */
function inFlatpak(): boolean {
  return (process.getBuiltinModule('node:fs') as typeof import('node:fs')).existsSync('/.flatpak-info');
}

/**
 * The bus connections of a one-shot process (the CLI), kept by its token store (store/select.ts) and released
 * together when the process is done with it (TokenStore.release), instead of each read closing its own: closing a
 * socket builds process.stderr (net.Socket's destroy compares itself with it), ~3 ms of every keychain command that
 * prints nothing there. Released with `exiting`, they are left to end with the process (the Secret Service forgets
 * a client's sessions when it leaves); otherwise closed (before `plat exec` runs its program). Without it (the
 * library, which never releases a context), each read closes its own connection.
 */
export class BusConnections {
  private readonly open = new Set<DBusConnection>();

  keep(bus: DBusConnection): void {
    this.open.add(bus);
  }

  release({ exiting = false }: { exiting?: boolean } = {}): void {
    for (const bus of this.open) {
      if (exiting) bus.unref();
      else bus.close();
    }
    this.open.clear();
  }
}

async function readPassword(socketPath: string, service: string, account: string, signal: AbortSignal, kept?: BusConnections): Promise<string | null | undefined> {
  // The D-Bus client is set up on a keychain read only: a run on the file store never builds its classes and tables.
  const { DBusConnection } = await import('./dbus.js');
  const bus = await DBusConnection.open(socketPath, signal);
  try {
    const secrets = { destination: SECRETS, path: SERVICE_PATH, interface: 'org.freedesktop.Secret.Service' };
    // Round trip 1 (with authentication and Hello): open a plain session and find the item, in one write.
    const opened = bus.call({ ...secrets, member: 'OpenSession', signature: 'sv', body: ['plain', ['s', '']] });
    const searched = bus.call({
      ...secrets,
      member: 'SearchItems',
      signature: 'a{ss}',
      body: [keytarAttributes(service, account)],
    });
    // Both settle before either is looked at, so a failure of one never leaves the other unhandled.
    const [openResult, searchResult] = await Promise.allSettled([opened, searched]);
    if (openResult.status === 'rejected') throw openResult.reason;
    if (searchResult.status === 'rejected') throw searchResult.reason;
    const session = objectPath(openResult.value[1]);
    const unlocked = objectPaths(searchResult.value[0]);
    const locked = objectPaths(searchResult.value[1]);
    if (unlocked.length === 0 && locked.length === 0) return null;
    if (unlocked.length !== 1 || locked.length !== 0) return undefined;
    // Round trip 2: the secret itself, as (session, parameters, value, content type).
    const [secret] = await bus.call({
      destination: SECRETS,
      path: unlocked[0]!,
      interface: 'org.freedesktop.Secret.Item',
      member: 'GetSecret',
      signature: 'o',
      body: [session],
    });
    const value = Array.isArray(secret) ? secret[2] : undefined;
    if (!Buffer.isBuffer(value)) throw new Error('the Secret Service answered GetSecret with something else than a secret');
    return decodeKeytarSecret(value);
  } finally {
    // Ending the connection ends the session: the Secret Service forgets a client's sessions when it leaves.
    if (kept) kept.keep(bus);
    else bus.close();
  }
}

function objectPath(value: DBusValue | undefined): string {
  if (typeof value !== 'string' || !value.startsWith('/')) throw new Error('the Secret Service sent no session path');
  return value;
}

function objectPaths(value: DBusValue | undefined): string[] {
  if (!Array.isArray(value)) throw new Error('the Secret Service sent no item list');
  return value.map(objectPath);
}
