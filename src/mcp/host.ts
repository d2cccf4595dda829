/**
 * What a failure means for the agent host that started plat mcp. Hosts start servers with a minimal environment
 * (the MCP SDK's default: HOME, LOGNAME, PATH, SHELL, TERM, USER), so a keychain that works in the person's shell may
 * be out of reach here; the fix is in the host's configuration, which the person edits, and the tool error says
 * what to put there.
 */
import { AuthError, PlatError } from '../errors.js';

export function forTheHost(error: unknown): unknown {
  if (!keychainOutOfReach(error)) return error;
  const message = (error as Error).message;
  const uid = typeof process.getuid === 'function' ? process.getuid() : '<uid>';
  const fix =
    'plat mcp runs with the environment its host gives it, and no OS keychain is reachable there. ' +
    `Add to plat's entry in the host's configuration "env": {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/${uid}/bus"} ` +
    '(the value echo $DBUS_SESSION_BUS_ADDRESS prints in a terminal where plat works), or keep the session in a 0600 file: ' +
    'run PLAT_TOKEN_STORE=file plat refresh once in that terminal and add "env": {"PLAT_TOKEN_STORE": "file"}. plat help agents shows both for each host.';
  const exitCode = error instanceof PlatError ? error.exitCode : 1;
  return exitCode === 4 ? new AuthError(`${message} ${fix}`, { cause: error }) : new PlatError(`${message} ${fix}`, exitCode, { cause: error });
}

/** A KeychainUnavailableError, or an error made from one (the session layer's "cannot reach the store"). */
function keychainOutOfReach(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e.name === 'KeychainUnavailableError') return true;
  }
  return false;
}
