/**
 * The end-to-end journey with a real browser: Debian's Chromium, driven by playwright-core, is plat's
 * PLAT_BROWSER. It opens the consent page, clicks Approve (or Deny) and lands on plat's own callback page.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { chromium } from '../helpers/components.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { scaled } from '../helpers/time.js';

const outputDir = path.join(repoRoot, 'test-output');
const browserScript = path.join(repoRoot, 'test', 'platform', 'chromium-browser.mjs');

describe.skipIf(chromium.skip)(chromium.title('login in a real browser (Chromium)'), () => {
  beforeEach(() => chromium.require());
  const platform = usePlatform();
  const home = useHome();
  beforeAll(async () => {
    await mkdir(outputDir, { recursive: true });
  });

  /**
   * The page text the browser script saves: the browser outlives plat briefly while it saves it (and the
   * screenshot). The script renames the file into place whole, so once it exists it is complete.
   */
  async function pageWritten(pageText: string): Promise<string> {
    for (let i = 0; i < scaled(100); i++) {
      if (await stat(pageText).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return readFile(pageText, 'utf8');
  }

  async function loginWithChromium(consent: 'approve' | 'deny') {
    const screenshot = path.join(outputDir, `browser-${consent}.png`);
    const pageText = path.join(home.dir, 'page.txt');
    const result = await home.run(['login', '--base-url', platform.baseUrl, '--scope', 'courses:read'], {
      env: {
        PLAT_BROWSER: `"${process.execPath}" "${browserScript}"`,
        // The suite's time factor for the browser script's own limits (the run's PLAT_ variables are not passed on).
        PLAT_TEST_TIME_SCALE: process.env.PLAT_TEST_TIME_SCALE,
        PLAT_TEST_CONSENT: consent,
        PLAT_TEST_SCREENSHOT: screenshot,
        PLAT_TEST_PAGE_TEXT: pageText,
      },
      timeoutMs: scaled(60_000),
    });
    return { result, screenshot, page: await pageWritten(pageText).catch(() => '') };
  }

  it('clicks Approve, lands on plat\'s success page, and plat is logged in', async () => {
    const { result, screenshot, page } = await loginWithChromium('approve');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Logged in to');
    expect(page).toContain('Signed in to Learning Platform API');
    for (const secret of platform.secrets()) expect(page).not.toContain(secret);
    expect((await stat(screenshot)).size).toBeGreaterThan(1000);
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
  }, scaled(60_000));

  it('the device flow: plat opens the verification page with the code in it; Chromium confirms and approves; plat signs in', async () => {
    const pageText = path.join(home.dir, 'device-page.txt');
    const result = await home.run(['login', '--device', '--base-url', platform.baseUrl, '--scope', 'courses:read'], {
      env: {
        PLAT_BROWSER: `"${process.execPath}" "${browserScript}"`,
        PLAT_TEST_TIME_SCALE: process.env.PLAT_TEST_TIME_SCALE,
        PLAT_TEST_CONSENT: 'approve',
        PLAT_TEST_PAGE_TEXT: pageText,
      },
      timeoutMs: scaled(60_000),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Opened the sign-in page in your browser/);
    expect(result.stdout).toMatch(/Logged in to .* as Ada Lovelace/);
    expect(await pageWritten(pageText)).toContain('Device signed in');
    expect((await home.run(['call', 'GET', '/api/courses'])).code).toBe(0);
  }, scaled(60_000));

  it('clicks Deny, lands on plat\'s failure page, and plat exits 4', async () => {
    const { result, page } = await loginWithChromium('deny');
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/denied/i);
    expect(page).toContain('Access denied');
    expect((await home.run(['token'])).code).toBe(4);
  }, scaled(60_000));
});
