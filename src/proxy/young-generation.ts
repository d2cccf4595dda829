/**
 * For a process that is a proxy and nothing else (`plat proxy`): V8 doubles its young generation (2 → 32 MiB)
 * whenever a scavenge finds much of it alive, which a proxy under load always does (64 exchanges in flight), and
 * never gives it back: the RSS rose 16% from 10,000 to 40,000 requests, as a bare Node proxy's does. The growth
 * factor is read at each growth, so set to 1 now it keeps the young generation at its initial size; scavenges come
 * more often and each has less to copy. Not for the library's client.proxy(), whose process is the caller's.
 */
import type * as v8 from 'node:v8';

export function keepYoungGenerationSmall(): void {
  try {
    (process.getBuiltinModule('node:v8') as typeof v8).setFlagsFromString('--semi-space-growth-factor=1');
  } catch {
    // Only memory is at stake: the proxy runs as Node would run it.
  }
}
