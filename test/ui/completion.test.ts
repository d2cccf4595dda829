/**
 * Shell completions, asked of real bash, zsh and fish with the generated scripts in completions/: commands,
 * options, and their values — HTTP methods, shells, files, scopes (cached metadata, else the spec's catalogue),
 * profile names and API paths (the cached /openapi.json) through `plat __complete`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, type Home } from '../helpers/cli.js';
import { startPlatform } from '../platform/index.mjs';
import { bash, bashCandidates, bashKeys, fish, fishCandidates, platOnPath, zsh, zshCandidates } from './shells.js';
import { usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const platform = usePlatform();
let home: Home;
let env: Record<string, string | undefined>;
/** A directory without spaces, for the file-name test. */
let files: string;

const EXTRA_SCOPE = 'lab:experiments';

beforeAll(async () => {
  // The server's metadata lists a scope the spec does not: completions must offer what the server says.
  const metadata = (await (await fetch(`${platform.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  const served = { ...metadata, scopes_supported: [...(metadata.scopes_supported as string[]), EXTRA_SCOPE] };
  platform.override('/.well-known/oauth-authorization-server', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    return true;
  });
  home = await makeHome();
  env = { ...home.env, PATH: `${await platOnPath(home.dir)}${path.delimiter}${process.env.PATH}` };
  // What a user has after `plat discover` and `plat op`: the caches the completions read.
  expect((await home.run(['discover', '--base-url', platform.baseUrl])).code).toBe(0);
  expect((await home.run(['op', '--base-url', platform.baseUrl])).code).toBe(0);
  await mkdir(path.join(home.configDir, 'profiles'), { recursive: true });
  await writeFile(path.join(home.configDir, 'profiles', 'work.json'), JSON.stringify({ baseUrl: platform.baseUrl }));
  await writeFile(path.join(home.configDir, 'profiles', 'staging.json'), JSON.stringify({}));
  files = await mkdtemp(path.join(os.tmpdir(), 'plat-completion-files-'));
  await writeFile(path.join(files, 'body.json'), '{}');
}, scaled(60_000));

afterAll(async () => {
  await home?.cleanup();
  if (files) await rm(files, { recursive: true, force: true });
});

const sorted = (list: string[]) => [...list].sort();

interface Driver {
  component: typeof bash;
  candidates(lines: string[], extraEnv?: Record<string, string>): Promise<string[][]>;
}

const drivers: Record<'bash' | 'zsh' | 'fish', Driver> = {
  bash: { component: bash, candidates: (lines, extra = {}) => bashCandidates(lines, { ...env, ...extra }, home.dir) },
  zsh: { component: zsh, candidates: (lines, extra = {}) => zshCandidates(lines, { ...env, ...extra }) },
  fish: { component: fish, candidates: (lines, extra = {}) => fishCandidates(lines, { ...env, ...extra }) },
};

for (const [shell, driver] of Object.entries(drivers)) {
  describe.skipIf(driver.component.skip)(driver.component.title(`completion in ${shell}`), () => {
    beforeEach(() => driver.component.require());

    it('completes command names, command options and global options after the command', async () => {
      const [commands, all, callOptions, globalAfter, globalBefore] = await driver.candidates([
        'plat lo',
        'plat ',
        'plat call --inc',
        'plat whoami --pro',
        'plat --ver',
      ]);
      expect(sorted(commands!)).toEqual(['login', 'logout']);
      expect(all).toEqual(expect.arrayContaining(['login', 'whoami', 'call', 'op', 'scopes', 'discover', 'completion', 'status']));
      expect(all).not.toContain('__complete');
      expect(callOptions).toEqual(['--include']);
      expect(globalAfter).toEqual(['--profile']);
      expect(sorted(globalBefore!)).toEqual(['--verbose', '--version']);
    });

    it('completes HTTP methods, shells, file names and help topics', async () => {
      const [methods, shells, input, help] = await driver.candidates([
        'plat call P',
        'plat completion ',
        `plat call POST /api/echo --input ${files}/bo`,
        'plat help dis',
      ]);
      expect(sorted(methods!)).toEqual(['PATCH', 'POST', 'PUT']);
      expect(sorted(shells!)).toEqual(['bash', 'fish', 'zsh']);
      expect(input).toHaveLength(1);
      expect(input![0]).toMatch(/body\.json$/);
      expect(help).toEqual(['discover']);
    });

    it('completes file names after plat batch --journal, and after plat exec -- a program, then its arguments (as after sudo)', async () => {
      // A program with a name no other has, on PATH beside plat.
      const probe = path.join(home.dir, 'bin', 'zzplatprobe');
      await writeFile(probe, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const [journal, program, afterOptions, argument] = await driver.candidates([
        `plat batch lines.ndjson --journal ${files}/bo`,
        'plat exec -- zzplatpro',
        'plat exec --env API_TOKEN -- zzplatpro',
        `plat exec -- zzplatprobe ${files}/bo`,
      ]);
      expect(journal).toHaveLength(1);
      expect(journal![0]).toMatch(/body\.json$/);
      expect(program).toEqual(['zzplatprobe']);
      expect(afterOptions).toEqual(['zzplatprobe']);
      expect(argument).toHaveLength(1);
      expect(argument![0]).toMatch(/body\.json$/);
    });

    it('completes scopes from the spec\'s catalogue when no platform is known', async () => {
      const [scopes, added] = await driver.candidates(['plat login --scope cour', 'plat login --add-scope students:w']);
      expect(sorted(scopes!)).toEqual(['courses:read', 'courses:write']);
      // bash offers the part after the colon (readline completes only that); the others the whole scope.
      expect(added!.map((s) => s.split(':').pop())).toEqual(['write']);
    });

    it('completes scopes from the cached metadata of the platform named by --base-url, PLAT_BASE_URL or the profile', async () => {
      const [byFlag, byProfile] = await driver.candidates([
        `plat login --base-url ${platform.baseUrl} --scope la`,
        'plat --profile work login --scope la',
      ]);
      const [byEnv] = await driver.candidates(['plat login --scope la'], { PLAT_BASE_URL: platform.baseUrl });
      for (const list of [byFlag, byProfile, byEnv]) expect(list!.map((s) => s.replace(/^lab:/, ''))).toEqual(['experiments']);
    });

    it('completes profile names', async () => {
      const [all, some] = await driver.candidates(['plat --profile ', 'plat whoami --profile w']);
      expect(sorted(all!)).toEqual(['staging', 'work']);
      expect(some).toEqual(['work']);
    });

    it('completes operationIds, then the operation\'s parameters and their enum values, from the cached /openapi.json', async () => {
      const platformEnv = { PLAT_BASE_URL: platform.baseUrl };
      const [ids, planned, forLogin, flags, include, status] = await driver.candidates(
        [
          'plat op getC',
          'plat scopes plan listE',
          'plat login --for getS',
          'plat op getCourse --',
          'plat op getCourse --courseId course-101 --include ',
          'plat op listEnrolments --courseId course-101 --status ',
        ],
        platformEnv,
      );
      expect(ids).toEqual(['getCourse']);
      expect(planned).toEqual(['listEnrolments']);
      expect(forLogin).toEqual(['getSchoolReport']);
      expect(flags).toEqual(expect.arrayContaining(['--courseId', '--include', '--Accept-Language', '--field', '--input']));
      expect(sorted(include!)).toEqual(['lecturers', 'lessons']);
      expect(sorted(status!)).toEqual(['active', 'completed']);
      const [nothing] = await driver.candidates(['plat op getC']);
      expect(nothing).toEqual([]);
    });

    it('completes API paths from the cached /openapi.json', async () => {
      const [paths] = await driver.candidates(['plat call GET /api/st'], { PLAT_BASE_URL: platform.baseUrl });
      expect(sorted(paths!)).toEqual(['/api/status/{code}', '/api/students']);
      const [none] = await driver.candidates(['plat call GET /api/st']);
      expect(none).toEqual([]);
    });
  });
}

describe.skipIf(bash.skip)(bash.title('Tab in bash'), () => {
  beforeEach(() => bash.require());

  it('inserts a unique command, and a unique scope with its colon intact', async () => {
    const lines = await bashKeys(['plat logi\t', 'plat login --scope courses:r\t', 'plat login --scope=students:r\t'], env, home.dir);
    expect(lines).toEqual(['plat login ', 'plat login --scope courses:read ', 'plat login --scope=students:read ']);
  });
});

describe('plat __complete (what the scripts call)', () => {
  let local: Home;
  beforeAll(async () => {
    local = await makeHome();
  });
  afterAll(async () => {
    await local.cleanup();
  });

  it('prints the spec\'s scopes with what they grant, one per line, when nothing is cached', async () => {
    const result = await local.run(['__complete', 'scopes']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(38);
    expect(lines).toContain('courses:read\tread courses');
  });

  it('prints nothing, successfully, for an unknown kind or a broken environment', async () => {
    for (const args of [['__complete', 'nonsense'], ['__complete', 'profiles', '--profile', '../x'], ['__complete', 'paths', '--base-url', 'ftp://x']]) {
      const result = await local.run(args);
      expect(result, args.join(' ')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
  });

  it('never offers a value that is not inert on a command line, whatever the document says', async () => {
    const hostile = await startPlatform();
    try {
      hostile.override('/openapi.json', (_req, res) => {
        const paths = { '/api/ok': { get: {} }, '/api/$(touch pwned)': { get: {} }, '/api/a;b': { get: {} }, '/api/`x`': { get: {} } };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ openapi: '3.1.0', paths }));
        return true;
      });
      expect((await local.run(['op', '--base-url', hostile.baseUrl])).code).toBe(0);
      const result = await local.run(['__complete', 'paths', '--base-url', hostile.baseUrl]);
      expect(result.stdout).toBe('/api/ok\tGET\n');
    } finally {
      await hostile.close();
    }
  });

  it('is hidden from help and from suggestions', async () => {
    expect((await local.run(['--help'])).stdout).not.toContain('__complete');
    const result = await local.run(['__compl']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('__complete');
  });
});
