/**
 * The one way a test file gets the reference platform and a throwaway home:
 *
 *   const platform = usePlatform();          // started once per file, reset before every test
 *   const home = useHome();                  // a fresh home per test, removed after it
 *
 * Both return a stand-in that forwards to the real object once the hook has made it, so test code reads
 * `platform.baseUrl` and `home.run(...)` as before. Reset is `platform.reset()`: every knob back to the platform's
 * own defaults (a knob a previous test set never leaks), no overrides, empty statistics; then the file's own
 * `knobs`, if it passed any.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startPlatform, type Knobs, type Platform, type PlatformOptions } from '../platform/index.mjs';
import { makeHome, type Home } from './cli.js';

/** A view of an object a hook creates later; using it before the hook ran fails with a sentence, not `undefined`. */
function lateBound<T extends object>(what: string, current: () => T | undefined): T {
  const target = () => {
    const value = current();
    if (!value) throw new Error(`${what} is not there yet: use it inside a test or hook, not at the top of the file`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const value = target();
      const member = Reflect.get(value, key, value);
      return typeof member === 'function' ? member.bind(value) : member;
    },
    set: (_, key, member) => Reflect.set(target(), key, member),
    has: (_, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}

export interface UsePlatformOptions extends PlatformOptions {
  /** Knobs this file runs with, applied after every reset. */
  knobs?: Partial<Knobs>;
}

/**
 * The reference platform for this file (or describe block): started before its first test, reset before each, closed
 * after the last. `options` may be a function, called when the platform starts (for options made by an earlier
 * beforeAll, such as a TLS certificate).
 */
export function usePlatform(options: UsePlatformOptions | (() => UsePlatformOptions | Promise<UsePlatformOptions>) = {}): Platform {
  let platform: Platform | undefined;
  let knobs: Partial<Knobs> | undefined;
  beforeAll(async () => {
    const { knobs: fileKnobs, ...platformOptions } = typeof options === 'function' ? await options() : options;
    knobs = fileKnobs;
    platform = await startPlatform(platformOptions);
  });
  afterAll(async () => {
    await platform?.close();
  });
  beforeEach(() => {
    platform!.reset();
    // Arrays are copied so that a test pushing to one does not change the file's own setting.
    for (const [name, value] of Object.entries(knobs ?? {})) Object.assign(platform!.knobs, { [name]: Array.isArray(value) ? [...value] : value });
  });
  return lateBound('the platform', () => platform);
}

/**
 * A fresh home (config dir, HOME, file token store) for each test of this file, removed after it. `extraEnv` may be
 * a function, read before each test (for values known only then, such as the platform's address).
 */
export function useHome(extraEnv: Record<string, string | undefined> | (() => Record<string, string | undefined>) = {}): Home {
  let home: Home | undefined;
  beforeEach(async () => {
    home = await makeHome(typeof extraEnv === 'function' ? extraEnv() : extraEnv);
  });
  afterEach(async () => {
    await home?.cleanup();
    home = undefined;
  });
  return lateBound('the home', () => home);
}
