import { UsageError } from '../errors.js';

/** A whole-number option value in 1..max, or a usage error that names the flag. */
export function parsePositiveInt(value: string | undefined, flag: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new UsageError(`${flag} must be a whole number from 1 to ${max} (got "${value}").`);
  }
  return n;
}
