#!/usr/bin/env node
// A real browser for end-to-end tests, usable as PLAT_BROWSER: `node chromium-browser.mjs <authorizeUrl>`.
// Opens the URL in headless Debian Chromium (driven by playwright-core), clicks #approve (or #deny with
// PLAT_TEST_CONSENT=deny), waits for the CLI's loopback callback page to load (for the device flow's verification
// page: confirms the code, consents, and waits for the platform's closing page), optionally saves a screenshot
// ($PLAT_TEST_SCREENSHOT) and the page text ($PLAT_TEST_PAGE_TEXT), then exits 0. Hard limit: 30 s.

import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

const TIME_SCALE = Math.min(6, Math.max(1, Number(process.env.PLAT_TEST_TIME_SCALE) || 1));
const HARD_TIMEOUT_MS = 30_000 * TIME_SCALE;
const STEP_TIMEOUT_MS = 20_000 * TIME_SCALE;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: chromium-browser.mjs <url>\n');
  process.exit(64);
}

const hardStop = setTimeout(() => {
  process.stderr.write(`chromium-browser: gave up after ${HARD_TIMEOUT_MS / 1000} s\n`);
  process.exit(124);
}, HARD_TIMEOUT_MS);

const button = process.env.PLAT_TEST_CONSENT === 'deny' ? '#deny' : '#approve';
const userDataDir = await mkdtemp(join(tmpdir(), 'plat-chromium-'));
/** @type {import('playwright-core').BrowserContext | undefined} */
let context;
let exitCode = 0;

try {
  const start = new URL(target);
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.PLAT_TEST_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 900, height: 700 },
    timeout: STEP_TIMEOUT_MS,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT_MS);

  /** @param {URL} url the CLI's own loopback listener, not the platform */
  const isCallback = (url) => url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname) && url.origin !== start.origin;

  await page.goto(target, { waitUntil: 'load' });
  // The device flow (plat login --device opens verification_uri_complete): confirm the code, then consent; the
  // platform's own page says the device is signed in (plat, polling, finishes by itself).
  const device = (await page.locator('form[id="op.deviceConfirmForm"]').count()) > 0;
  // An authorization error (bad scope, missing PKCE...) redirects straight to the callback: nothing to click.
  const needsConsent = device || !isCallback(new URL(page.url()));
  if (device) {
    await page.locator('#continue').click();
    await page.waitForURL((url) => url.pathname.startsWith('/interaction/'), { waitUntil: 'load' });
    await page.locator(button).click();
    // The platform's closing page, loaded: waiting for the URL alone could read a body the new document had not
    // filled yet (an empty page text, seen once under load).
    await page.waitForURL((url) => !url.pathname.startsWith('/interaction/'), { waitUntil: 'load' });
  } else {
    if (needsConsent) await page.locator(button).click();
    // The consent form redirects through the authorization server to the CLI's own loopback listener.
    await page.waitForURL(isCallback, { waitUntil: 'load' });
  }
  const landed = new URL(page.url());

  if (process.env.PLAT_TEST_SCREENSHOT) await page.screenshot({ path: process.env.PLAT_TEST_SCREENSHOT, fullPage: true });
  if (process.env.PLAT_TEST_PAGE_TEXT) {
    // Written aside and renamed over: the test reads the file as soon as it exists, so it must never see it half-written.
    const pageText = process.env.PLAT_TEST_PAGE_TEXT;
    await writeFile(`${pageText}.partial`, await page.innerText('body'));
    await rename(`${pageText}.partial`, pageText);
  }
  const action = needsConsent ? `clicked ${button}` : 'no consent page';
  process.stderr.write(`chromium-browser: ${action}; landed on ${landed.origin}${landed.pathname}\n`);
} catch (err) {
  process.stderr.write(`chromium-browser: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
  exitCode = 1;
} finally {
  await context?.close().catch(() => {});
  await rm(userDataDir, { recursive: true, force: true }).catch(() => {});
  clearTimeout(hardStop);
}
process.exit(exitCode);
