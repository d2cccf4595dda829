/** Small shared renderers for human output; JSON output is built by each command with a documented shape. */
import type { IO } from '../../terminal/io.js';
import type { ProfileUser } from '../../store/types.js';
import { escapeJsonForTerminal, sanitize } from '../../terminal/text.js';

export function describeUser(user: ProfileUser | undefined): string {
  if (!user) return 'an unknown user';
  // Profiles written by older versions hold the names as the server sent them: made safe here too.
  const name = sanitize(user.name ?? user.preferredUsername ?? user.sub);
  const email = user.email ? sanitize(user.email) : undefined;
  return email && email !== name ? `${name} <${email}>` : name;
}

/**
 * The user in every --json shape (login, status), named as the OIDC claims are named (`preferred_username`, as in
 * `plat whoami --json`): one naming across the shapes. Absent claims are left out.
 */
export function userJson(user: ProfileUser | undefined): { sub: string; name?: string; email?: string; preferred_username?: string } | null {
  if (!user) return null;
  return {
    sub: user.sub,
    ...(user.name !== undefined ? { name: user.name } : {}),
    ...(user.email !== undefined ? { email: user.email } : {}),
    ...(user.preferredUsername !== undefined ? { preferred_username: user.preferredUsername } : {}),
  };
}

export function iso(epochMs: number | undefined): string | null {
  // A stored number no Date can hold (a server's, from before plat capped lifetimes) prints as unknown, not a crash.
  if (epochMs === undefined || !Number.isFinite(new Date(epochMs).getTime())) return null;
  return new Date(epochMs).toISOString();
}

/** "in 59 minutes" / "3 minutes ago" — approximate on purpose, the absolute time is printed beside it. */
export function relative(epochMs: number, now: number): string {
  const diff = epochMs - now;
  const abs = Math.abs(diff);
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  const [size, unit] = units.find(([s]) => abs >= s) ?? [1000, 'second'];
  const n = Math.max(0, Math.round(abs / size));
  const text = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return diff > 0 ? `in ${text}` : `${text} ago`;
}

export function expiryText(expiresAt: number | undefined, now: number): string {
  if (expiresAt === undefined) return 'unknown (the server did not say)';
  return `${expiresAt > now ? 'expires' : 'expired'} ${relative(expiresAt, now)} (${iso(expiresAt)})`;
}

/** Aligned "label  value" rows. */
export function rows(io: IO, entries: Array<[string, string]>): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${io.dim(`${k.padEnd(width)}`)}  ${v}`).join('\n') + '\n';
}

export function printJson(io: IO, value: unknown): void {
  // --json output holds server strings (names, metadata, the API description): inert on a terminal, as is in a pipe.
  const text = JSON.stringify(value, null, 2);
  io.out(`${io.stdoutIsTTY ? escapeJsonForTerminal(text) : text}\n`);
}
