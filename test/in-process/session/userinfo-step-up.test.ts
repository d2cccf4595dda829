/**
 * whoami's step-up (session/userinfo.ts) is for the invocation's own profile only: `plat status --check` asks each
 * listed profile's UserInfo, and a refusal there for lack of a scope is never offered as a step-up (a "yes" would
 * sign in again as the current profile, adding the scopes to it). Run in-process on a context that looks like a
 * person at a terminal, so the question would come if the rule did not hold; test/ui/terminal.test.ts shows that
 * `plat whoami` itself asks.
 */
import { describe, expect, it } from 'vitest';
import { run as status } from '../../../src/commands/auth/status.js';
import { identify } from '../../../src/session/index.js';
import { signIn } from '../../helpers/consent.js';
import { useTestContexts } from '../../helpers/context.js';
import { useHome, usePlatform } from '../../helpers/platform.js';
import { readProfile } from '../../helpers/state.js';

const platform = usePlatform();
const home = useHome();
const open = useTestContexts(home);

describe("UserInfo's step-up question", () => {
  it('names who asks: plat whoami says whoami, any other caller what it asked', async () => {
    platform.knobs.protectedResourceMetadata = 'missing';
    await signIn(home, platform, ['--scope', 'openid courses:read']);
    platform.override('/api/oauth/userinfo', (req, res) => {
      req.resume();
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="analytics:read"' }).end();
      return true;
    });
    const asked = async (asker?: string) => {
      const t = open({ env: { CI: undefined, PLAT_NO_PROMPT: undefined }, globals: { prompt: true }, stdin: 'n\n', terminal: true });
      await identify(t.ctx, { quiet: true, ...(asker ? { asker } : {}) }).catch(() => undefined);
      return t.stderr();
    };
    expect(await asked('whoami')).toMatch(/^whoami needs analytics:read\. Sign in again adding it\? \[y\/N\]/m);
    const other = await asked();
    expect(other).toMatch(/Reading who you are \(UserInfo\) needs analytics:read\. Sign in again/);
    expect(other).not.toMatch(/whoami needs/);
  });
});

describe('plat status --check at a terminal', () => {
  it("another profile's UserInfo refusal naming a missing scope asks nothing, and no profile gains the scope", async () => {
    platform.knobs.protectedResourceMetadata = 'missing'; // tokens UserInfo takes
    await signIn(home, platform, ['--scope', 'openid courses:read']);
    await signIn(home, platform, ['--profile', 'work', '--scope', 'openid courses:read']);
    const work = (await home.run(['token', '--profile', 'work'])).stdout.trim();
    // Only the other profile's token is refused: the current one's check goes through.
    platform.override('/api/oauth/userinfo', (req, res) => {
      if (req.headers.authorization !== `Bearer ${work}`) return false;
      req.resume();
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="analytics:read"' }).end();
      return true;
    });
    platform.stats.reset();
    const t = open({ env: { CI: undefined, PLAT_NO_PROMPT: undefined }, globals: { prompt: true, json: true }, stdin: 'n\n', terminal: true });
    await status(t.ctx, { check: true }).catch(() => undefined);
    expect(t.stderr()).not.toMatch(/\[y\/N\]/);
    expect(t.stderr()).not.toMatch(/needs analytics:read/);
    // The refusal leaves work unchecked (what the ID token said stands in); default's check went through.
    const listed = JSON.parse(t.stdout()).profiles as Array<{ profile: string; works?: boolean }>;
    expect(Object.fromEntries(listed.map((p) => [p.profile, p.works]))).toEqual({ default: true, work: undefined });
    expect(platform.stats.count('GET /api/oauth/userinfo')).toBeGreaterThanOrEqual(2);
    expect(platform.stats.count('token:authorization_code')).toBe(0);
    for (const name of ['default', 'work']) expect((await readProfile(home, name)).scopes).not.toContain('analytics:read');
  });
});
