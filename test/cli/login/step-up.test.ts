/**
 * Step-up: `plat login --add-scope` asks for the union of the granted scopes and the new ones, and the hint a
 * 403 insufficient_scope prints is exactly that command. Granted scopes come from the token response (falling
 * back to the requested ones) and are stored per profile.
 */
import { describe, expect, it } from 'vitest';
import { authorizeUrls, signIn } from '../../helpers/consent.js';
import { readProfile, readStoredSession } from '../../helpers/state.js';
import { APPROVING_BROWSER, requestedScopes } from '../../helpers/login.js';
import { useHome, usePlatform } from '../../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

/** The command a failed call tells the user to run, split into plat's arguments (without "plat"). */
function printedCommand(stderr: string): string[] {
  const line = /Run: (plat login[^\n]*)/.exec(stderr)?.[1];
  expect(line, stderr).toBeDefined();
  const [plat, ...args] = line!.trim().split(/\s+/);
  expect(plat).toBe('plat');
  return args;
}

/** Runs a command exactly as printed, with a browser that approves consent (as a person would). */
function runAsPrinted(args: string[], env: Record<string, string | undefined> = {}) {
  return home.run(args, { env: { PLAT_BROWSER: APPROVING_BROWSER, ...env } });
}

describe('step-up with --add-scope', () => {
  it('the whole loop: call → exit 5 with the command → run it as printed → the call succeeds', async () => {
    await signIn(home, platform, ['--scope', 'openid profile courses:read']);
    const denied = await home.run(['call', 'GET', '/api/analytics']);
    expect(denied.code).toBe(5);
    const command = printedCommand(denied.stderr);
    expect(command).toEqual(['login', '--add-scope', 'analytics:read']);

    const stepUp = await runAsPrinted(command);
    expect(stepUp.code, stepUp.stderr).toBe(0);
    const [authorizeUrl] = authorizeUrls(stepUp.stderr);
    // the union of what was granted and what was added; nothing else
    expect(requestedScopes(authorizeUrl!)).toEqual(['analytics:read', 'courses:read', 'email', 'openid', 'profile']);
    expect(stepUp.stdout).toMatch(/Scopes: openid profile email courses:read analytics:read/);
    // A registration covers the scopes it was made for (RFC 7591 `scope`): asking for more registers once more.
    expect(platform.stats.count('register')).toBe(2);
    expect(stepUp.stderr).toMatch(/registration does not include analytics:read; registering again/);

    const allowed = await home.run(['call', 'GET', '/api/analytics']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout).anonymous).toBe(false);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
    expect((await readProfile(home)).scopes).toEqual(['openid', 'profile', 'email', 'courses:read', 'analytics:read']);
  });

  it('in another profile the hint names it, and following it steps up that profile only', async () => {
    await signIn(home, platform, ['--scope', 'courses:read']);
    await signIn(home, platform, ['--profile', 'work', '--scope', 'courses:read']);
    const denied = await home.run(['call', 'GET', '/api/students', '--profile', 'work']);
    expect(denied.code).toBe(5);
    const command = printedCommand(denied.stderr);
    expect(command).toEqual(['login', '--profile', 'work', '--add-scope', 'students:read']);
    const stepUp = await runAsPrinted(command);
    expect(stepUp.code, stepUp.stderr).toBe(0);
    expect((await home.run(['call', 'GET', '/api/students', '--profile', 'work'])).code).toBe(0);
    expect((await home.run(['call', 'GET', '/api/students'])).code).toBe(5);
    expect((await readProfile(home, 'default')).scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);
  });

  it('stores the scopes the server granted, not the ones asked for, and the next step-up builds on those', async () => {
    platform.knobs.grantScopes = (requested) => requested.filter((s) => s !== 'students:read');
    const { result } = await signIn(home, platform, ['--scope', 'courses:read students:read']);
    expect(result.stdout).toMatch(/Scopes: openid profile email courses:read\n/);
    expect((await readProfile(home)).scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);
    expect((await readStoredSession(home)).scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);

    platform.knobs.grantScopes = null;
    const stepUp = await runAsPrinted(['login', '--add-scope', 'analytics:read']);
    expect(stepUp.code, stepUp.stderr).toBe(0);
    const [authorizeUrl] = authorizeUrls(stepUp.stderr);
    expect(requestedScopes(authorizeUrl!)).toEqual(['analytics:read', 'courses:read', 'email', 'openid', 'profile']);
  });

  it('falls back to the requested scopes when the token response names none', async () => {
    platform.knobs.tokenResponseScope = 'omitted';
    const { result } = await signIn(home, platform, ['--scope', 'courses:read', '--verbose']);
    // The token response (the registration request and response carry `scope` since RFC 7591 registration sends it)
    expect(result.stderr).toMatch(/^< .*"access_token"/m);
    expect(result.stderr).not.toMatch(/^< .*"access_token".*"scope":/m);
    expect((await readProfile(home)).scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);
    // a refresh whose response names no scope keeps the stored ones
    expect((await home.run(['refresh'])).code).toBe(0);
    expect((await readStoredSession(home)).scopes).toEqual(['openid', 'profile', 'email', 'courses:read']);
  });

  it('--add-scope without a session on that server is a usage error', async () => {
    const result = await home.run(['login', '--base-url', platform.baseUrl, '--add-scope', 'analytics:read']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--add-scope adds to an existing session/);
  });
});
