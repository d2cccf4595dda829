/**
 * Issue 24, "a second week with plat": several profiles on two platforms, cron and CI, gh habits. Each test runs
 * the command as the user typed it, and a hint plat prints is pasted and run.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { approving, signIn } from '../helpers/consent.js';
import { keyring } from '../helpers/components.js';
import { readProfile, readStoredSession } from '../helpers/state.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { freePort } from '../interop/servers.js';
import { scaled } from '../helpers/time.js';

const school = usePlatform();
const district = usePlatform();
const home = useHome();

/** The words of a `plat …` command quoted in a message, as a person would paste them (without the leading plat). */
function pasted(text: string, pattern: RegExp): string[] {
  const match = pattern.exec(text);
  if (!match) throw new Error(`no hint matching ${pattern} in:\n${text}`);
  return match[1]!.trim().split(/\s+/).slice(1);
}

describe('sessions that must not be lost or misdirected', () => {
  describe.skipIf(keyring.skip)(keyring.title('PLAT_TOKEN_STORE=file on a keychain profile'), () => {
    const noBus = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', DISPLAY: undefined };

    it('from cron (no session bus): exit 4 naming the move, the profile untouched; the move works and the job then runs', async () => {
      keyring.require();
      await signIn(home, school, ['--scope', 'courses:read'], { PLAT_TOKEN_STORE: undefined });
      expect((await readProfile(home)).tokenStore).toBe('keychain');

      // What cron meets: no keychain. Not "logged out": exit 4, said, and nothing changed.
      const cron = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: undefined, ...noBus } });
      expect(cron.code).toBe(4);
      expect(cron.stdout).toBe('');
      expect(cron.stderr).toMatch(/The OS keychain is not available \(.+\), and profile default keeps its session there: this run cannot use it, and the profile is unchanged\./);
      expectCleanError(cron);
      // The cron hint of old: PLAT_TOKEN_STORE=file. It must not log the profile out either.
      const withFile = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: 'file', ...noBus } });
      expect(withFile.code).toBe(4);
      expect((await home.run(['whoami'], { env: { PLAT_TOKEN_STORE: 'file', ...noBus } })).code).toBe(4);
      const profile = await readProfile(home);
      expect(profile.loggedIn).toBe(true);
      expect(profile.tokenStore).toBe('keychain');

      // The keychain is back: the session is still there.
      const back = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: undefined } });
      expect(back.code, back.stderr).toBe(0);
      expect(JSON.parse(back.stdout).anonymous).toBe(false);

      // The hint, pasted where the keychain works, moves the session once, said as such.
      const hint = /move the session to a 0600 file once, from a shell where the keychain works: PLAT_TOKEN_STORE=file (plat [^—]+) —/.exec(cron.stderr);
      expect(hint).not.toBeNull();
      const moved = await home.run(pasted(cron.stderr, /works: PLAT_TOKEN_STORE=file (plat [^—]+) —/), { env: { PLAT_TOKEN_STORE: 'file' } });
      expect(moved.code, moved.stderr).toBe(0);
      expect(moved.stderr).toMatch(/Moved the session of profile default from the OS keychain to .*tokens \(mode 0600\), as PLAT_TOKEN_STORE=file asks/);
      expect((await readProfile(home)).tokenStore).toBe('file');

      // The cron job now runs without a keychain.
      const job = await home.run(['call', 'GET', '/api/courses'], { env: { PLAT_TOKEN_STORE: 'file', ...noBus } });
      expect(job.code, job.stderr).toBe(0);
      expect(JSON.parse(job.stdout).anonymous).toBe(false);
      expect(job.stderr).toBe('');
      // And without PLAT_TOKEN_STORE the profile reads its store, the file, so nothing is lost either.
      expect((await home.run(['token'], { env: { PLAT_TOKEN_STORE: undefined, ...noBus } })).code).toBe(0);
    });
  });

  it('PLAT_BASE_URL=$A plat call --profile b: the flag and the environment disagree, so plat says so and stops (exit 2)', async () => {
    await signIn(home, district, ['--profile', 'b', '--scope', 'courses:read']);
    const result = await home.run(['call', '--profile', 'b', 'GET', '/api/courses'], { env: { PLAT_BASE_URL: school.baseUrl } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: --profile b is for ${district.baseUrl}, but PLAT_BASE_URL names ${school.baseUrl}. Unset PLAT_BASE_URL to use the profile, or pass --base-url to say which platform you mean.\n`,
    );
    for (const args of [['token', '--profile', 'b'], ['whoami', '--profile', 'b'], ['op', '--profile', 'b']]) {
      expect((await home.run(args, { env: { PLAT_BASE_URL: school.baseUrl } })).code).toBe(2);
    }
    // Agreeing is fine.
    expect((await home.run(['token', '--profile', 'b'], { env: { PLAT_BASE_URL: district.baseUrl } })).code).toBe(0);
    // Both as flags, disagreeing: the profile's tokens stay home, and the profile signed in there is named.
    await signIn(home, school, ['--profile', 'a']);
    const both = await home.run(['token', '--profile', 'b', '--base-url', school.baseUrl]);
    expect(both.code).toBe(4);
    expect(both.stderr).toBe(
      `error: Profile b is signed in to ${district.baseUrl}, not to ${school.baseUrl}, so its tokens are not used there. Profile a is signed in there: use --profile a.\n`,
    );
  });

  it('--base-url naming the platform exactly one other profile is signed in to uses that profile, and says so', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    await signIn(home, district, ['--profile', 'x', '--scope', 'courses:read']);
    const call = await home.run(['call', '--base-url', district.baseUrl, 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);
    expect(call.stderr).toBe(`Using profile x, signed in to ${district.baseUrl}.\n`);
    const token = await home.run(['token', '--base-url', district.baseUrl]);
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toBe((await home.run(['token', '--profile', 'x'])).stdout.trim());
    // default's session is untouched
    expect((await readProfile(home)).baseUrl).toBe(school.baseUrl);
  });

  it('--base-url naming a platform several profiles are signed in to names them (exit 2)', async () => {
    await signIn(home, school);
    await signIn(home, district, ['--profile', 'x']);
    await signIn(home, district, ['--profile', 'y']);
    const result = await home.run(['token', '--base-url', district.baseUrl]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: Profiles x, y are all signed in to ${district.baseUrl}: choose one with --profile (for example --profile x).\n`);
  });

  it('--base-url naming a platform no profile is signed in to: the suggested login makes a new profile, and never moves this one', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    const token = await home.run(['token', '--base-url', district.baseUrl]);
    expect(token.code).toBe(4);
    const login = pasted(token.stderr, /under a profile of its own: (plat login .*)$/m);
    const fresh = `host-${new URL(district.baseUrl).port}`;
    expect(login).toEqual(['login', '--profile', fresh, '--base-url', district.baseUrl]);
    const consent = approving(district);
    const signedIn = await home.run([...login, '--no-browser'], { onStderr: consent.onStderr });
    expect(signedIn.code, signedIn.stderr).toBe(0);
    // The pasted login left default where it was, and --base-url now finds the new profile.
    expect((await readProfile(home)).baseUrl).toBe(school.baseUrl);
    expect((await readProfile(home)).loggedIn).toBe(true);
    const again = await home.run(['token', '--base-url', district.baseUrl]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe(`Using profile ${fresh}, signed in to ${district.baseUrl}.\n`);
  });

  it('plat status: a logged-out profile is shown but the exit code is about the current one', async () => {
    await signIn(home, school);
    await signIn(home, district, ['--profile', 'old']);
    expect((await home.run(['logout', '--profile', 'old'])).code).toBe(0);
    const status = await home.run(['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toBe('');
    expect(status.stdout).toMatch(/^old\n(.*\n)*?.*Logged in\s+no$/m);
    expect((await home.run(['status', '--json'])).code).toBe(0);
    expect((await home.run(['status', 'old'])).code).toBe(4);
    expect((await home.run(['status', '--profile', 'old'])).code).toBe(4);
    expect((await home.run(['logout'])).code).toBe(0);
    expect((await home.run(['status'])).code).toBe(4);
  });

  it('plat status --check says what was checked and when, and shows the expiry of the token it checked', async () => {
    school.knobs.protectedResourceMetadata = 'missing'; // an API publishing no RFC 9728 document: tokens not bound to it, so UserInfo answers
    school.knobs.accessTokenTtl = 2;
    await signIn(home, school);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const result = await home.run(['status', '--check']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Check\s+the token works: the server's UserInfo endpoint accepted it .* \(\d{4}-\d\d-\d\dT[\d:.]+Z\), after refreshing it/);
    expect(result.stdout).not.toMatch(/expired .* ago/);
  });
});

describe('CI and non-interactive runs', () => {
  it('CI=true plat login --base-url X </dev/null fails at once (exit 4) with the ways that work, registering nothing', async () => {
    const started = Date.now();
    const result = await home.run(['login', '--base-url', school.baseUrl], { env: { CI: 'true', DISPLAY: undefined, WAYLAND_DISPLAY: undefined }, stdinDevNull: true });
    expect(result.code).toBe(4);
    expect(Date.now() - started).toBeLessThan(scaled(5_000));
    expect(result.stderr).toMatch(/^error: This login cannot finish here: nobody can approve it \(.+\), so plat did not start it\. For CI and jobs, pass a token in PLAT_TOKEN/);
    expect(result.stderr).toContain(`plat login --base-url ${school.baseUrl} --no-browser --port 8765 and ssh -L 8765:127.0.0.1:8765`);
    expect(school.stats.count('register')).toBe(0);
    expectCleanError(result);
    // The same on a desktop with CI set: nobody watches a runner's browser.
    expect((await home.run(['login', '--base-url', school.baseUrl], { env: { CI: 'true', DISPLAY: ':0' }, stdinDevNull: true })).code).toBe(4);
  });

  it('what can still finish is not refused: a pipe to paste into, or a forwarded --port', async () => {
    // stdin a pipe: the address can be pasted (test/cli/login covers the paste itself); it waits, then times out.
    const piped = await home.run(['login', '--no-browser', '--base-url', school.baseUrl, '--timeout', '1'], { env: { CI: 'true' } });
    expect(piped.stderr).toMatch(/No answer from the browser within 1 s/);
    const forwarded = await home.run(['login', '--no-browser', '--port', String(await freePort()), '--base-url', school.baseUrl, '--timeout', '1'], { env: { CI: 'true' }, stdinDevNull: true });
    expect(forwarded.stderr).toMatch(/No answer from the browser within 1 s/);
  });
});

describe('hints that work when pasted', () => {
  it('the ended-session hint carries the scopes the profile had: pasted, the next call works (no exit 5, no second round)', async () => {
    school.knobs.accessTokenTtl = 2;
    await signIn(home, school, ['--profile', 'short', '--scope', 'courses:read']);
    const { refreshToken } = await readStoredSession(home, 'short');
    const revoked = await fetch(`${school.baseUrl}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, client_id: (await readProfile(home, 'short')).client.clientId }),
    });
    expect(revoked.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    school.knobs.accessTokenTtl = 3600;
    const first = await home.run(['call', '--profile', 'short', 'GET', '/api/courses']);
    expect(first.code).toBe(4);
    expect(first.stderr).toContain('Run plat login --profile short --scope courses:read to sign in again.');
    const ended = await home.run(['call', '--profile', 'short', 'GET', '/api/courses']);
    expect(ended.code).toBe(4);
    const hint = pasted(ended.stderr, /Sign in again with (plat login [^,]+),/);
    expect(hint).toEqual(['login', '--profile', 'short', '--scope', 'courses:read']);
    const consent = approving(school);
    const again = await home.run(hint, { onStderr: consent.onStderr, env: { DISPLAY: undefined } });
    expect(again.code, again.stderr).toBe(0);
    const call = await home.run(['call', '--profile', 'short', 'GET', '/api/courses']);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout).anonymous).toBe(false);
  });

  it('plat exec --min-ttl 900 -- ./job: the job gets a token that lasts at least 900 s', async () => {
    school.knobs.accessTokenTtl = 600;
    await signIn(home, school, ['--scope', 'courses:read']);
    school.knobs.accessTokenTtl = 3600;
    const before = (await home.run(['token'])).stdout.trim();
    const job = path.join(home.dir, 'job');
    await writeFile(job, '#!/bin/sh\nprintf %s "$PLAT_TOKEN"\n', { mode: 0o755 });
    const result = await home.run(['exec', '--min-ttl', '900', '--', './job'], { cwd: home.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toBe(before);
    expect((await readStoredSession(home)).accessToken).toBe(result.stdout);
    expect((await readStoredSession(home)).expiresAt - Date.now()).toBeGreaterThan(900_000);
    expect((await home.run(['exec', '--help'])).stdout).toContain('--min-ttl <seconds>');
    const bad = await home.run(['exec', '--min-ttl', 'soon', '--', './job']);
    expect(bad.code).toBe(2);
  });

  it('every unknown word gets the same closest-match sentence: switch pear, scopes pln, scopes plan listStudent, login --for listStudent', async () => {
    await signIn(home, school, ['--profile', 'pears']);
    expect((await home.run(['switch', 'pears'])).code).toBe(0);
    const sw = await home.run(['switch', 'pear']);
    expect(sw.code).toBe(2);
    expect(sw.stderr).toBe('error: There is no profile pear. Did you mean pears? To create it, sign in: plat login --profile pear\n');

    const pln = await home.run(['scopes', 'pln']);
    expect(pln.code).toBe(2);
    expect(pln.stderr).toMatch(/^error: plat scopes has no subcommand "pln"\. Did you mean plan\?/);

    const plan = await home.run(['scopes', 'plan', 'listStudent']);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/^error: The platform's API has no operation "listStudent"\. Did you mean listStudents\?/);
    const forLogin = await home.run(['login', '--for', 'listStudent', '--no-browser']);
    expect(forLogin.code).toBe(2);
    expect(forLogin.stderr).toMatch(/^error: The platform's API has no operation "listStudent"\. Did you mean listStudents\?/);
  });

  it('login --for after a logout asks for the planned scopes again, and the operation then works', async () => {
    await signIn(home, school, ['--for', 'listStudents']);
    expect((await home.run(['logout'])).code).toBe(0);
    const consent = approving(school);
    const again = await home.run(['login', '--no-browser', '--for', 'listStudents'], { onStderr: consent.onStderr });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Scopes: .*students:read/);
    const op = await home.run(['op', 'listStudents']);
    expect(op.code, op.stderr).toBe(0);
    // After logout --forget the profile is gone: login --for makes it again instead of calling it a typo.
    expect((await home.run(['logout', '--profile', 'default', '--forget'])).code).toBe(0);
    await signIn(home, school, ['--profile', 'work', '--for', 'listStudents']);
    expect((await readProfile(home, 'work')).scopes).toContain('students:read');
  });
});

describe('operations', () => {
  /** The platform's own document, with one operation that says `security: []` (public). */
  async function withPublicOperation(): Promise<void> {
    const doc = (await (await fetch(`${school.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    doc.paths['/api/echo'] = { ...(doc.paths['/api/echo'] ?? {}), get: { operationId: 'publicEcho', summary: 'Echo, open to all', security: [], responses: { 200: { description: 'OK' } } } };
    school.override('/openapi.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
      return true;
    });
  }

  it('security: [] is public: planned as needing no scope, described so, and run without a token', async () => {
    await withPublicOperation();
    await signIn(home, school, ['--scope', 'courses:read']);
    const plan = await home.run(['scopes', 'plan', 'publicEcho']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toBe('No scopes: these operations need none.\n');
    expect(plan.stderr).not.toMatch(/credential other than/);
    const help = await home.run(['op', 'publicEcho', '--help']);
    expect(help.stdout).toContain('Scopes: none (a token is not needed).');
    const run = await home.run(['op', 'publicEcho']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ authenticated: false });
    expect(JSON.parse(run.stdout).headers.authorization).toBeUndefined();
    // login --for a public operation alone: nothing to plan beyond the sign-in itself.
    const consent = approving(school);
    const login = await home.run(['login', '--no-browser', '--profile', 'open', '--base-url', school.baseUrl, '--for', 'publicEcho'], { onStderr: consent.onStderr });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain('publicEcho need no scope.');
  });
});

describe('gh habits', () => {
  it('plat api /api/courses | jq: a GET that prints the body (not the operations table); -X, fields, -q, -i, -H, --input, --paginate', async () => {
    await signIn(home, school, ['--scope', 'courses:read,courses:write']);
    const get = await home.run(['api', '/api/courses']);
    expect(get.code, get.stderr).toBe(0);
    expect(JSON.parse(get.stdout)).toMatchObject({ anonymous: false });
    expect(get.stdout).toBe((await home.run(['call', 'GET', '/api/courses'])).stdout);

    // Fields switch to POST with a JSON body, as in gh; -X GET keeps them as query parameters.
    const post = await home.run(['api', '/api/echo', '-f', 'title=Algebra', '-F', 'seats=30', '-H', 'X-Trace: 1']);
    expect(post.code, post.stderr).toBe(0);
    expect(JSON.parse(post.stdout)).toMatchObject({ method: 'POST', body: '{"title":"Algebra","seats":30}', headers: { 'x-trace': '1' } });
    const query = await home.run(['api', '-X', 'GET', '/api/echo', '-f', 'q=algebra', '-q', '.query.q']);
    expect(query.stdout).toBe('algebra\n');
    const put = await home.run(['api', '--method', 'put', '/api/echo', '--input', '-', '-i'], { stdin: '{"a":1}' });
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toMatch(/^HTTP\/1\.1 200 /);
    expect(put.stdout).toContain('"method":"PUT"');

    const pages = await home.run(['api', '/api/lists/link', '--paginate', '-q', '.[].id']);
    expect(pages.code, pages.stderr).toBe(0);
    expect(pages.stdout.trim().split('\n').length).toBeGreaterThan(1);
    // The listing is plat op's alone.
    expect((await home.run(['api'])).code).toBe(2);
    expect((await home.run(['op'])).stdout).toMatch(/listCourses\s+GET\s+\/api\/courses/);
  });

  it('plat call /api/courses: add the method; -X POST and -q are answered with plat call\'s spelling, which then works', async () => {
    await signIn(home, school, ['--scope', 'courses:read']);
    const noMethod = await home.run(['call', '/api/courses']);
    expect(noMethod.code).toBe(2);
    expect(noMethod.stderr).toBe('error: plat call needs the method before the path: add it, as in plat call GET /api/courses (or plat api /api/courses, GET by default).\n');
    expect((await home.run(pasted(noMethod.stderr, /as in (plat call [^(]+) \(/))).code).toBe(0);

    const x = await home.run(['call', '-X', 'POST', '/api/echo']);
    expect(x.code).toBe(2);
    expect(x.stderr).toBe('error: plat call takes the method as its first word, not -X: plat call POST /api/echo (or plat api -X POST /api/echo, gh\'s shape).\n');
    const fixed = await home.run(pasted(x.stderr, /not -X: (plat call [^(]+) \(/));
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(JSON.parse(fixed.stdout).method).toBe('POST');

    const q = await home.run(['call', 'GET', '/api/courses', '-q', '.anonymous']);
    expect(q.code).toBe(2);
    expect(q.stderr).toBe('error: plat call spells -q as --jq: plat call GET /api/courses --jq .anonymous (plat api takes -q too).\n');
    const jq = await home.run(pasted(q.stderr, /as --jq: (plat call .+) \(plat api/));
    expect(jq.stdout).toBe('false\n');
  });

  it("--paginate --jq '.items[]' says jq sees all pages' items as one array (gh filters each page), in the error and in --help", async () => {
    const result = await home.run(['call', 'GET', '/api/lists/cursor', '--paginate', '--jq', '.data[]', '--anonymous'], { env: { PLAT_BASE_URL: school.baseUrl } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: --jq failed on the response: Cannot index array with .*data.*\. With --paginate, --jq gets one array of every page's items \(not each page, as gh api's does\): write \.\[\] where gh takes \.items\[\]/);
    for (const command of ['call', 'api']) {
      const help = (await home.run([command, '--help'])).stdout;
      expect(help, command).toMatch(/not\s+each\s+page\s+as\s+(in\s+)?gh/);
    }
  });
});

describe('plat op on a terminal', () => {
  it('fits the table to the terminal width: summaries cut or left out, scopes whole (wrapped between scopes); piped, rows stay whole', async () => {
    const { onTerminal } = await import('../ui/shells.js');
    const { platBin } = await import('../helpers/cli.js');
    const plat = `'${process.execPath}' '${platBin}' op --base-url ${school.baseUrl}`;
    const shown = await onTerminal(`stty cols 100 rows 40; ${plat}`, { ...home.env, NO_COLOR: '1' });
    expect(shown.code).toBe(0);
    const lines = shown.output.replace(/\r/g, '').split('\n');
    const table = lines.slice(0, lines.findIndex((line) => /operations? in /.test(line)));
    expect(table.length).toBeGreaterThan(5);
    for (const line of table) expect([...line].length, line).toBeLessThanOrEqual(100);
    // Scopes whole: a long list goes on under itself, broken between scopes, never inside one.
    const enrolments = table.findIndex((line) => line.startsWith('listEnrolments'));
    expect(`${table[enrolments]!.trimEnd()} ${table[enrolments + 1]!.trim()}`).toMatch(/\scourses:read students:read \| members:read$/);
    for (const line of table) expect(line).not.toMatch(/\b(courses|students|members):$/m);
    // A wider terminal keeps the summaries, cut to fit.
    const wide = await onTerminal(`stty cols 150 rows 40; ${plat}`, { ...home.env, NO_COLOR: '1' });
    const wideTable = wide.output.replace(/\r/g, '').split('\n').filter((line) => /^\w+\s+(GET|POST|PUT|PATCH|DELETE)\s/.test(line));
    for (const line of wideTable) expect([...line].length, line).toBeLessThanOrEqual(150);
    expect(wide.output).toMatch(/^listCourses\s+GET\s+\/api\/courses\s+List courses\s+courses:read$/m);
    const piped = await home.run(['op', '--base-url', school.baseUrl]);
    expect(piped.stdout).not.toMatch(/…/);
    expect(Math.max(...piped.stdout.split('\n').map((line) => line.length))).toBeGreaterThan(100);
  });
});

describe('documentation', () => {
  it("test/README.md's way to approve the sandbox's consent page without a browser works as printed", async () => {
    const { readFile } = await import('node:fs/promises');
    const { execFile } = await import('node:child_process');
    const { repoRoot } = await import('../helpers/cli.js');
    const readme = await readFile(path.join(repoRoot, 'test', 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('PLAT_BROWSER="node test/platform/approve-browser.mjs"'));
    expect(line).toBeDefined();
    const command = line!.replace('<that URL>', school.baseUrl).replace(/^PLAT_BROWSER="node /, `PLAT_BROWSER="'${process.execPath}' `).replace(' node bin/plat.js', ` '${process.execPath}' bin/plat.js`);
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('sh', ['-c', command], { cwd: repoRoot, env: { ...home.env, DISPLAY: undefined } as NodeJS.ProcessEnv, timeout: 20_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Logged in to /);
  });
});
