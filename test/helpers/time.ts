/**
 * How long a test may wait, on this machine now. Every bound a test sets on wall-clock time (a test's timeout, a
 * spawned plat's deadline, "ends within 3 s") is a budget for an idle two-core machine, multiplied by one factor:
 * PLAT_TEST_TIME_SCALE when set, else one worked out when the run starts (test/vitest.config.ts) from the load the
 * machine already carries, at least 2 (a second run may start beside this one after it measured), more under CI.
 * Bounds that catch a hang (Ctrl-C that does not end plat, a wait that never returns) still catch it when scaled:
 * a hang is forever, not twice as long. Lower bounds ("slow_down waits five seconds more") are not scaled: a busy
 * machine makes waits longer, not shorter (only a tolerance for jitter in what a server measures is).
 */
import os from 'node:os';

/** The factor for this run: PLAT_TEST_TIME_SCALE (a number ≥ 1), or measured from the machine's load. */
export function timeScaleFor(env: NodeJS.ProcessEnv, load = os.loadavg()[0] ?? 0, cores = os.availableParallelism()): number {
  const given = Number(env.PLAT_TEST_TIME_SCALE);
  if (Number.isFinite(given) && given >= 1) return given;
  const ci = Boolean(env.CI) && env.CI !== 'false' && env.CI !== '0';
  // Processes already running before the suite share the cores with it: each of the suite's gets that much less.
  const busy = 1 + load / Math.max(1, cores);
  // In halves, so a log shows a round number; never above 6 (a machine that busy needs PLAT_TEST_TIME_SCALE).
  return Math.min(6, Math.max(ci ? 3 : 2, Math.ceil(busy * 2) / 2));
}

/** This run's factor (vitest.config.ts puts it in the environment every test worker inherits). */
const TIME_SCALE = timeScaleFor(process.env);

/**
 * `ms` of an idle machine, on this one. `under`: how long the bug the bound catches would take (a fallback timer, a
 * default deadline): the bound never reaches it, however busy the machine, so the test still tells them apart.
 */
export function scaled(ms: number, options: { under?: number } = {}): number {
  return Math.min(Math.round(ms * TIME_SCALE), options.under ?? Infinity);
}
