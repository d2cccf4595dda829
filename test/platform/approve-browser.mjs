#!/usr/bin/env node
// A stand-in for a user's browser, usable as PLAT_BROWSER / BROWSER: `node approve-browser.mjs <authorizeUrl>`.
// Approves (or, with PLAT_TEST_CONSENT=deny, denies) the platform's consent page over plain HTTP, then requests
// the final redirect the way a browser landing there would. It never prints codes or tokens: one short line on
// stderr, nothing on stdout.

import { driveConsent, land } from './consent.mjs';

const url = process.argv[2];
if (!url) {
  process.stderr.write('usage: approve-browser.mjs <authorize-url>\n');
  process.exit(64);
}

const deny = process.env.PLAT_TEST_CONSENT === 'deny';
try {
  const callback = new URL(await driveConsent(url, { deny }));
  const response = await land(callback.href);
  process.stderr.write(`approve-browser: ${deny ? 'denied' : 'approved'}; ${callback.origin}${callback.pathname} answered HTTP ${response.status}\n`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`approve-browser: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
