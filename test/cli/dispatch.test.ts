/**
 * The plain forms (`plat call <method> <path>`, `plat token`, `plat whoami`, no option anywhere) run without
 * commander, from dist/plain-<command>.cjs (src/dispatch.ts). Held here against commander itself, on the built CLI: each form
 * is run as is, and again with --no-color, an option that changes nothing here (neither stream is a terminal, so
 * there is no colour to turn off) but makes bin/plat.js load dist/main.cjs and main.ts hand the words to commander.
 * The two runs must send the same requests to the reference platform and print the same stdout, stderr and exit
 * code. Which bundle ran is read from the code cache each leaves (named after its bundle), so a form that silently
 * stopped being plain fails here too.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlatResult } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
const home = useHome(() => ({ PLAT_BASE_URL: platform.baseUrl }));

/** The requests the platform received during one run: method, path with query, and whether a token came with it. */
async function runRecorded(args: string[]): Promise<PlatResult & { requests: string[]; bundle: string }> {
  const requests: string[] = [];
  platform.clearOverrides();
  platform.override('/', (req) => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ? 'token' : 'anonymous'}`);
    return false;
  });
  const cacheDir = path.join(home.dir, 'code cache');
  await rm(cacheDir, { recursive: true, force: true });
  const result = await home.run(args, { env: { XDG_CACHE_HOME: cacheDir } });
  const [cache, ...more] = await readdir(path.join(cacheDir, 'plat'));
  expect(more).toEqual([]);
  return { ...result, requests, bundle: cache!.split('-')[0]! };
}

async function expectParity(words: string[]) {
  const plain = await runRecorded(words);
  const commander = await runRecorded([...words, '--no-color']);
  expect(plain.bundle, `plat ${words.join(' ')}`).toBe('plain');
  expect(commander.bundle).toBe('main');
  expect({ code: commander.code, stdout: commander.stdout, stderr: commander.stderr, requests: commander.requests }, `plat ${words.join(' ')}`).toEqual({
    code: plain.code,
    stdout: plain.stdout,
    stderr: plain.stderr,
    requests: plain.requests,
  });
  return plain;
}

const FORMS = () => [
  ['call', 'GET', '/api/courses'],
  ['call', 'post', 'api/courses'],
  ['call', 'GET', `${platform.baseUrl}/api/courses?page=2&q=a b`],
  ['call', 'GET', ''],
  ['call', 'help', '/api/courses'], // a method named like the help command is still the method
  ['call', 'DELETE', '/api/courses/=x'],
  ['token'],
  ['whoami'],
];

describe('the plain forms main.ts runs without commander, and commander, given the same words', () => {
  it('signed in: the same requests, stdout, stderr and exit code', async () => {
    expect((await home.login(platform, ['--scope', 'courses:read'])).code).toBe(0);
    const codes: Array<number | null> = [];
    for (const words of FORMS()) codes.push((await expectParity(words)).code);
    // The forms reach the platform and fail there as well as succeed: both paths are compared on both.
    expect(codes).toContain(0);
    expect(codes.some((code) => code !== 0)).toBe(true);
  }, scaled(60_000));

  it('signed out: the same anonymous calls, and the same refusals (exit 4)', async () => {
    const results = [];
    for (const words of FORMS()) results.push(await expectParity(words));
    expect(results.at(-1)!.code).toBe(4);
    expect(results[0]!.requests).toEqual([expect.stringMatching(/^GET \/api\/courses anonymous$/)]);
  }, scaled(60_000));
});
