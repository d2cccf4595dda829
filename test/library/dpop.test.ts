/**
 * The Node library on a DPoP-bound session (RFC 9449), imported from the packed package by a program in a child
 * process: client.fetch and client.paginate go through the one authenticated-request path, so every request (each
 * page its own) carries a fresh proof the reference platform checks; client.token() says the token is DPoP-bound.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { usePackedProject } from '../helpers/package.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { definedEnv } from '../helpers/env.js';

const platform = usePlatform({ dpop: true });
const home = useHome();
const packed = usePackedProject();

describe('the library on a DPoP-bound session', () => {
  it('fetch and every page of paginate carry a proof by the session key; token() says DPoP', async () => {
    const login = await home.login(platform, ['--scope', 'courses:read']);
    expect(login.code, login.stderr).toBe(0);
    platform.dpopProofs.length = 0;
    const file = await packed.project().script(
      'dpop-program.mjs',
      `import { createClient } from 'plat-cli';
const client = createClient();
const courses = await (await client.fetch('/api/courses')).json();
const items = [];
for await (const item of client.paginate('/api/lists/link?per_page=5&total=12')) items.push(item);
const token = await client.token();
process.stdout.write(JSON.stringify({ anonymous: courses.anonymous, items: items.length, tokenType: token.tokenType }));
`,
    );
    const env = definedEnv(home.env) as NodeJS.ProcessEnv;
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [file], { cwd: packed.project().dir, env, timeout: 20_000 }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))),
    );
    expect(JSON.parse(stdout)).toEqual({ anonymous: false, items: 12, tokenType: 'DPoP' });
    // One proof for fetch, one per page (3), each by the session's key, none seen twice.
    expect(platform.dpopProofs.map((p) => p.htu)).toEqual([`${platform.baseUrl}/api/courses`, ...Array(3).fill(`${platform.baseUrl}/api/lists/link`)]);
    expect(new Set(platform.dpopProofs.map((p) => p.jti)).size).toBe(4);
    expect(new Set(platform.dpopProofs.map((p) => p.jkt)).size).toBe(1);
  });
});
