/**
 * Finding the user's session bus without DBUS_SESSION_BUS_ADDRESS (src/store/session-bus.ts), as libsecret and
 * sd-bus do: `$XDG_RUNTIME_DIR/bus` when that is set, else `/run/user/<uid>/bus`, a socket owned by this user only. The probe stands in
 * for stat(2) because /run/user belongs to the machine; the real socket, reached with the MCP SDK's minimal
 * environment, is in test/cli/mcp-hosts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { sessionBusAddress, type BusProbe } from '../../../src/store/session-bus.js';

function probe(uid: number, files: Record<string, { uid: number; socket: boolean }>): BusProbe {
  return {
    uid,
    stat: (path) => {
      const file = files[path];
      return file && { uid: file.uid, isSocket: () => file.socket };
    },
  };
}

describe('sessionBusAddress', () => {
  it('is the environment\'s address when it names one, whatever sockets there are', () => {
    const env = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/tmp/dbus-x,guid=1', XDG_RUNTIME_DIR: '/run/user/1000' };
    expect(sessionBusAddress(env, 'linux', probe(1000, { '/run/user/1000/bus': { uid: 1000, socket: true } }))).toBe('unix:path=/tmp/dbus-x,guid=1');
  });

  it('is $XDG_RUNTIME_DIR/bus when that is set, else /run/user/<uid>/bus, when the socket is this user\'s', () => {
    const files = { '/tmp/run dir/bus': { uid: 1000, socket: true }, '/run/user/1000/bus': { uid: 1000, socket: true } };
    expect(sessionBusAddress({ XDG_RUNTIME_DIR: '/tmp/run dir/' }, 'linux', probe(1000, files))).toBe('unix:path=/tmp/run%20dir/bus');
    expect(sessionBusAddress({}, 'linux', probe(1000, files))).toBe('unix:path=/run/user/1000/bus');
    // A runtime dir that is set is the only one looked in (as sd-bus does): a private one keeps the user's bus out.
    expect(sessionBusAddress({ XDG_RUNTIME_DIR: '/elsewhere' }, 'linux', probe(1000, files))).toBeUndefined();
  });

  it('is nothing for a socket another user owns, a file that is not a socket, or no socket at all', () => {
    expect(sessionBusAddress({}, 'linux', probe(1000, { '/run/user/1000/bus': { uid: 0, socket: true } }))).toBeUndefined();
    expect(sessionBusAddress({ XDG_RUNTIME_DIR: '/tmp/r' }, 'linux', probe(1000, { '/tmp/r/bus': { uid: 1001, socket: true } }))).toBeUndefined();
    expect(sessionBusAddress({}, 'linux', probe(1000, { '/run/user/1000/bus': { uid: 1000, socket: false } }))).toBeUndefined();
    expect(sessionBusAddress({}, 'linux', probe(1000, {}))).toBeUndefined();
    // A relative runtime dir is not one.
    expect(sessionBusAddress({ XDG_RUNTIME_DIR: 'run' }, 'linux', probe(1000, { 'run/bus': { uid: 1000, socket: true } }))).toBeUndefined();
  });

  it('is never looked for on macOS or Windows', () => {
    const files = { '/run/user/501/bus': { uid: 501, socket: true } };
    expect(sessionBusAddress({}, 'darwin', probe(501, files))).toBeUndefined();
    expect(sessionBusAddress({}, 'win32', probe(501, files))).toBeUndefined();
  });
});
