/**
 * `--json` for scripts: one JSON document on stdout and nothing else, in the documented shape (shapes.ts, README
 * "JSON output"), wherever --json is put on the command line. Errors stay sentences on stderr with the exit code.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PlatResult } from '../helpers/cli.js';
import { API, arrayOf, DISCOVER, LOGIN, LOGOUT, mismatches, object, REFRESH, SCOPE_PLAN, SCOPES, STATUS, SWITCH, WHOAMI, type Shape } from './shapes.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

/** Exactly one JSON document on stdout, newline-terminated, in the shape. */
function expectJson(result: PlatResult, shape: Shape, code = 0): unknown {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout.endsWith('\n')).toBe(true);
  const value = JSON.parse(result.stdout) as unknown;
  expect(mismatches(value, shape)).toEqual([]);
  return value;
}

async function loggedIn(args: string[] = ['--scope', 'openid profile email courses:read']) {
  const result = await home.login(platform, ['--json', ...args]);
  return expectJson(result, LOGIN) as { scopes: string[] };
}

describe('--json shapes', () => {
  it('login', async () => {
    const value = await loggedIn();
    expect(value).toMatchObject({ profile: 'default', baseUrl: platform.baseUrl, tokenStore: 'file', user: { sub: 'user-ada' } });
    expect(value.scopes).toEqual(expect.arrayContaining(['openid', 'courses:read']));
  });

  it('whoami, with --json before or after the command', async () => {
    await loggedIn();
    const after = expectJson(await home.run(['whoami', '--json']), WHOAMI);
    const before = expectJson(await home.run(['--json', 'whoami']), WHOAMI);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ sub: 'user-ada', email: 'ada@example.test' });
  });

  it('status: logged in, logged out, damaged, and with --check', async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    await loggedIn();
    await mkdir(path.join(home.configDir, 'profiles'), { recursive: true });
    await writeFile(path.join(home.configDir, 'profiles', 'old.json'), JSON.stringify({ baseUrl: platform.baseUrl, loggedIn: false }));
    await writeFile(path.join(home.configDir, 'profiles', 'broken.json'), '{not json');
    // Two other profiles not logged in: the listing in full, and exit 0 since the current one is signed in (issue 24).
    const value = expectJson(await home.run(['status', '--json']), STATUS) as { profiles: Array<{ profile: string; loggedIn: boolean }> };
    expect(value.profiles.map((p) => [p.profile, p.loggedIn])).toEqual([
      ['default', true],
      ['old', false],
      ['broken', false],
    ]);
    expectJson(await home.run(['status', 'old', '--json']), STATUS, 4);
    const checked = expectJson(await home.run(['status', 'default', '--check', '--json']), STATUS) as { profiles: Array<{ works?: boolean; checkedAt?: string }> };
    expect(checked.profiles[0]!.works).toBe(true);
    expect(checked.profiles[0]!.checkedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('refresh', async () => {
    await loggedIn();
    const value = expectJson(await home.run(['refresh', '--json']), REFRESH);
    expect(value).toMatchObject({ profile: 'default' });
  });

  it('logout, and logout --all (an array)', async () => {
    await loggedIn();
    expect(expectJson(await home.run(['logout', '--json']), LOGOUT)).toEqual({ profile: 'default', wasLoggedIn: true, revoked: true, revocationErrors: [], forgotten: false });
    expect(expectJson(await home.run(['logout', '--json']), LOGOUT)).toMatchObject({ wasLoggedIn: false });
    await loggedIn();
    const all = expectJson(await home.run(['logout', '--all', '--json']), arrayOf(LOGOUT));
    expect(all).toEqual([{ profile: 'default', wasLoggedIn: true, revoked: true, revocationErrors: [], forgotten: false }]);
  });

  it('switch', async () => {
    await loggedIn(['--profile', 'school']);
    expect(expectJson(await home.run(['switch', 'school', '--json']), SWITCH)).toEqual({ profile: 'school', previous: 'default', baseUrl: platform.baseUrl, loggedIn: true });
  });

  it('scopes, scopes plan, op, api and discover, with no session', async () => {
    const base = ['--base-url', platform.baseUrl, '--json'];
    expectJson(await home.run(['scopes', ...base]), SCOPES);
    expectJson(await home.run(['scopes', '--json']), SCOPES);
    expectJson(await home.run(['op', ...base]), API);
    expectJson(await home.run(['op', ...base]), API);
    expectJson(await home.run(['scopes', 'plan', 'listEnrolments', 'getSchoolReport', ...base]), SCOPE_PLAN);
    expectJson(await home.run(['discover', ...base]), DISCOVER);
  });

  it('an error is a sentence on stderr with its exit code, and stdout stays empty', async () => {
    const result = await home.run(['whoami', '--json']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Not logged in/);
  });
});

describe('the shape checker', () => {
  it('names missing keys, extra keys and wrong types', () => {
    const shape = object({ a: 'string', b: 'iso' }, { optional: ['b'] });
    expect(mismatches({ a: 'x' }, shape)).toEqual([]);
    expect(mismatches({ a: 1, c: true, b: 'yesterday' }, shape)).toEqual([
      '$.a: expected string, got number',
      '$.b: expected an ISO timestamp, got "yesterday"',
      '$.c: not part of the documented shape',
    ]);
    expect(mismatches({}, shape)).toEqual(['$.a: missing']);
  });
});
