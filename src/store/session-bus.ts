/**
 * The user's D-Bus session bus when DBUS_SESSION_BUS_ADDRESS is unset, found as libsecret (GDBus) and sd-bus find
 * it: the socket `$XDG_RUNTIME_DIR/bus` when XDG_RUNTIME_DIR is set, else `/run/user/<uid>/bus` (sd-bus's order: a
 * runtime dir that is set is the only one looked in), used only when it is a socket owned by this user (another
 * user's socket there is not this user's keychain). Agent hosts start `plat mcp` with a minimal
 * environment (the MCP SDK passes HOME, LOGNAME, PATH, SHELL, TERM and USER) in which the keychain is otherwise out
 * of reach, though the person's session bus is right there.
 */
import type { Stats } from 'node:fs';

export interface BusProbe {
  uid: number | undefined;
  /** stat(2) of a path (following links, as connect(2) does), or undefined when there is nothing there. */
  stat(path: string): Pick<Stats, 'uid' | 'isSocket'> | undefined;
}

/** The session bus address: the environment's, else the user's bus socket as `unix:path=…`, else undefined. */
export function sessionBusAddress(env: Record<string, string | undefined>, platform: NodeJS.Platform, probe: BusProbe = systemProbe()): string | undefined {
  const named = env.DBUS_SESSION_BUS_ADDRESS?.trim();
  if (named) return named;
  if (platform === 'darwin' || platform === 'win32' || probe.uid === undefined) return undefined;
  const runtimeDir = env.XDG_RUNTIME_DIR;
  if (runtimeDir !== undefined && !runtimeDir.startsWith('/')) return undefined;
  const path = runtimeDir ? `${runtimeDir.replace(/\/+$/, '')}/bus` : `/run/user/${probe.uid}/bus`;
  const stats = probe.stat(path);
  return stats?.isSocket() && stats.uid === probe.uid ? `unix:path=${escapeAddress(path)}` : undefined;
}

/** D-Bus address values escape every byte outside [-0-9A-Za-z_/.\\*] as %xx. */
function escapeAddress(path: string): string {
  return [...Buffer.from(path, 'utf8')].map((byte) => (/[-0-9A-Za-z_/.\\*]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0')}`)).join('');
}

function systemProbe(): BusProbe {
  const fs = process.getBuiltinModule('node:fs') as typeof import('node:fs');
  return {
    uid: typeof process.getuid === 'function' ? process.getuid() : undefined,
    stat: (path) => {
      try {
        return fs.statSync(path);
      } catch {
        return undefined;
      }
    },
  };
}

/** The socket path of a session bus address (`unix:path=…` or Linux's `unix:abstract=…`); undefined for others. */
export function socketPathOf(address: string | undefined): string | undefined {
  for (const entry of (address ?? '').split(';')) {
    const match = /^unix:(.*)$/.exec(entry.trim());
    if (!match) continue;
    const keys = new Map(
      match[1]!.split(',').map((pair) => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at), unescapeValue(pair.slice(at + 1))] as const;
      }),
    );
    if (keys.has('path')) return keys.get('path');
    if (keys.has('abstract')) return `\0${keys.get('abstract')}`;
  }
  return undefined;
}

function unescapeValue(value: string): string {
  // Most addresses escape nothing and are ASCII: no regular expression then (V8 compiles one it runs twice to
  // machine code, ~0.1 ms of a start).
  let plain = !value.includes('%');
  for (let i = 0; plain && i < value.length; i++) plain = value.charCodeAt(i) < 0x80;
  if (plain) return value;
  return Buffer.from(value.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}
