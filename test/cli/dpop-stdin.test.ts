/**
 * A DPoP-bound request whose body comes from stdin, to an API that asks for its nonce (RFC 9449 §9,
 * use_dpop_nonce): plat cannot send that body a second time, so it must say so and how to send it (from a file),
 * not that the API asked again after plat sent the nonce (it never did). Found with the MCP conformance suite's
 * auth/dpop-nonce scenario (test/interop/mcp-conformance-dpop.test.ts), whose client once sent its body from stdin.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform({ dpop: true });
const home = useHome();

describe('a bound session, an API that asks for its DPoP nonce, a body from stdin', () => {
  it('says the stdin body cannot be sent again with the nonce and names --input <file>; the same body from a file goes through', async () => {
    platform.knobs.dpopNonce = 'required';
    const login = await home.login(platform, ['--scope', 'courses:read courses:write']);
    expect(login.code, login.stderr).toBe(0);
    const body = JSON.stringify({ title: 'Thermodynamics' });

    const piped = await home.run(['call', 'POST', '/api/courses', '--input', '-'], { stdin: body });
    expect(piped.code).toBe(1);
    expectCleanError(piped);
    expect(piped.stderr).not.toMatch(/again after plat sent/);
    expect(piped.stderr).toMatch(/use_dpop_nonce/);
    expect(piped.stderr).toMatch(/stdin/);
    expect(piped.stderr).toMatch(/--input <file>/);

    const file = path.join(home.dir, 'course.json');
    await writeFile(file, body);
    const fromFile = await home.run(['call', 'POST', '/api/courses', '--input', file]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout).course.title).toBe('Thermodynamics');
  });
});
