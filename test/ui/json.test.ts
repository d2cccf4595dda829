/**
 * `--json` for scripts: one JSON document on stdout and nothing else, in the documented shape (the JSON Schemas in
 * src/schemas/, shipped in dist/schemas/; `plat help scripting`), wherever --json is put on the command line. Errors
 * stay sentences on stderr with the exit code.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type PlatResult } from '../helpers/cli.js';
import { readSchema, SCHEMA_DIR, SCHEMA_NAMES, schemaErrors } from './schemas.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

/** Exactly one JSON document on stdout, newline-terminated, in the shape. */
function expectJson(result: PlatResult, schema: string, code = 0): unknown {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout.endsWith('\n')).toBe(true);
  const value = JSON.parse(result.stdout) as unknown;
  expect(schemaErrors(value, schema)).toEqual([]);
  return value;
}

async function loggedIn(args: string[] = ['--scope', 'openid profile email courses:read']) {
  const result = await home.login(platform, ['--json', ...args]);
  return expectJson(result, 'login') as { scopes: string[] };
}

describe('--json shapes', () => {
  it('login', async () => {
    const value = await loggedIn();
    expect(value).toMatchObject({ profile: 'default', baseUrl: platform.baseUrl, tokenStore: 'file', user: { sub: 'user-ada' } });
    expect(value.scopes).toEqual(expect.arrayContaining(['openid', 'courses:read']));
  });

  it('whoami, with --json before or after the command', async () => {
    await loggedIn();
    const after = expectJson(await home.run(['whoami', '--json']), 'whoami');
    const before = expectJson(await home.run(['--json', 'whoami']), 'whoami');
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
    const value = expectJson(await home.run(['status', '--json']), 'status') as { profiles: Array<{ profile: string; loggedIn: boolean }> };
    expect(value.profiles.map((p) => [p.profile, p.loggedIn])).toEqual([
      ['default', true],
      ['old', false],
      ['broken', false],
    ]);
    expectJson(await home.run(['status', 'old', '--json']), 'status', 4);
    const checked = expectJson(await home.run(['status', 'default', '--check', '--json']), 'status') as { profiles: Array<{ works?: boolean; checkedAt?: string }> };
    expect(checked.profiles[0]!.works).toBe(true);
    expect(checked.profiles[0]!.checkedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('refresh', async () => {
    await loggedIn();
    const value = expectJson(await home.run(['refresh', '--json']), 'refresh');
    expect(value).toMatchObject({ profile: 'default' });
  });

  it('logout, and logout --all (an array)', async () => {
    await loggedIn();
    expect(expectJson(await home.run(['logout', '--json']), 'logout')).toEqual({ profile: 'default', wasLoggedIn: true, revoked: true, revocationErrors: [], forgotten: false });
    expect(expectJson(await home.run(['logout', '--json']), 'logout')).toMatchObject({ wasLoggedIn: false });
    await loggedIn();
    const all = expectJson(await home.run(['logout', '--all', '--json']), 'logout');
    expect(all).toEqual([{ profile: 'default', wasLoggedIn: true, revoked: true, revocationErrors: [], forgotten: false }]);
  });

  it('token', async () => {
    await loggedIn();
    expect(expectJson(await home.run(['token', '--json']), 'token')).toMatchObject({ token_type: 'Bearer', profile: 'default', base_url: platform.baseUrl });
  });

  it('switch', async () => {
    await loggedIn(['--profile', 'school']);
    expect(expectJson(await home.run(['switch', 'school', '--json']), 'switch')).toEqual({ profile: 'school', previous: 'default', baseUrl: platform.baseUrl, loggedIn: true });
  });

  it('scopes, scopes plan, op and discover, with no session', async () => {
    const base = ['--base-url', platform.baseUrl, '--json'];
    expectJson(await home.run(['scopes', ...base]), 'scopes');
    expectJson(await home.run(['scopes', '--json']), 'scopes');
    expectJson(await home.run(['op', ...base]), 'operations');
    expectJson(await home.run(['scopes', 'plan', 'listEnrolments', 'getSchoolReport', ...base]), 'scopes-plan');
    expectJson(await home.run(['discover', ...base]), 'discover');
  });

  it('an error is a sentence on stderr with its exit code, and stdout stays empty', async () => {
    const result = await home.run(['whoami', '--json']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Not logged in/);
  });
});


/** The command modules that print `--json`, and the schema each one's output is checked against. */
const SCHEMA_OF_COMMAND: Record<string, string> = {
  'discover.ts': 'discover',
  'auth/login.ts': 'login',
  'auth/logout.ts': 'logout',
  'op/list.ts': 'operations',
  'auth/refresh.ts': 'refresh',
  'scopes/plan.ts': 'scopes-plan',
  'scopes/scopes.ts': 'scopes',
  'auth/status.ts': 'status',
  'auth/switch.ts': 'switch',
  'auth/token.ts': 'token',
  'auth/whoami.ts': 'whoami',
};

describe('the JSON Schemas', () => {
  const root = path.resolve(SCHEMA_DIR, '../..');

  it('every command that prints --json has its schema, and every schema a command', async () => {
    const commands = path.join(root, 'src', 'commands');
    const printing: string[] = [];
    // A folder per command family (commands/auth/login.ts): every file below commands/, by its path there.
    for (const file of await readdir(commands, { recursive: true })) {
      if (file.endsWith('.ts') && (await readFile(path.join(commands, file), 'utf8')).includes('ctx.globals.json')) printing.push(file.split(path.sep).join('/'));
    }
    expect(printing.sort()).toEqual(Object.keys(SCHEMA_OF_COMMAND).sort());
    expect([...new Set(Object.values(SCHEMA_OF_COMMAND))].sort()).toEqual(SCHEMA_NAMES);
  });

  it('are strict draft 2020-12 documents with a title and a description', () => {
    for (const name of SCHEMA_NAMES) {
      const schema = readSchema(name);
      expect(schema.$schema, name).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(typeof schema.title, name).toBe('string');
      expect(typeof schema.description, name).toBe('string');
      expect(schemaErrors.bind(null, {}, name), name).not.toThrow(); // compiles under ajv's strict mode
    }
  });

  it('ship in dist/schemas/ as in src/schemas/, and plat help scripting points to them', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { files: string[]; exports: Record<string, unknown> };
    expect(pkg.files).toContain('dist');
    expect(pkg.exports['./schemas/*']).toBe('./dist/schemas/*');
    const scripting = await readFile(path.join(root, 'src', 'help', 'topics', 'scripting.md'), 'utf8');
    for (const name of SCHEMA_NAMES) {
      expect(await readFile(path.join(root, 'dist', 'schemas', `${name}.json`), 'utf8'), name).toBe(await readFile(path.join(SCHEMA_DIR, `${name}.json`), 'utf8'));
      expect(scripting, name).toContain(`schemas/${name}.json`);
    }
  });

  it('name missing keys, extra keys, wrong types and malformed timestamps', () => {
    const good = { profile: 'default', expiresAt: null, scopes: ['openid'] };
    expect(schemaErrors(good, 'refresh')).toEqual([]);
    expect(schemaErrors({ ...good, expiresAt: '2026-11-25T10:00:00.000Z' }, 'refresh')).toEqual([]);
    expect(schemaErrors({ profile: 1, expiresAt: 'yesterday', scopes: [], extra: true }, 'refresh')).toEqual(
      expect.arrayContaining(['$.extra: not part of the documented shape', '$.profile: must be string', '$.expiresAt: must match format "date-time"']),
    );
    expect(schemaErrors({ scopes: [] }, 'refresh')).toEqual(['$.profile: missing', '$.expiresAt: missing']);
    expect(schemaErrors({ ...good, expiresAt: '2026-11-25T10:00:00+01:00' }, 'refresh')).not.toEqual([]);
    expect(schemaErrors({ profile: 'p', previous: 'q', baseUrl: 'ftp://x', loggedIn: true }, 'switch')).not.toEqual([]);
  });
});
