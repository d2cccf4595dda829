/**
 * What only the login tests share: the scopes an authorization URL asks for, a PLAT_BROWSER that approves, and a
 * third party's call to the API. The consent driver and the readers of plat's files are the suite's own
 * (test/helpers/consent.ts, test/helpers/state.ts).
 */
import path from 'node:path';
import { repoRoot } from './cli.js';
import { param } from './consent.js';
import type { Platform } from '../platform/index.mjs';

/** The scopes an authorization URL asks for, sorted. */
export const requestedScopes = (authorizeUrl: string) => (param(authorizeUrl, 'scope') ?? '').split(' ').filter(Boolean).sort();

/** PLAT_BROWSER that approves consent over HTTP and lands on the callback, like a person clicking Approve. */
export const APPROVING_BROWSER = `"${process.execPath}" "${path.join(repoRoot, 'test', 'platform', 'approve-browser.mjs')}"`;

/** Calls the API directly with a token, as a third party would. */
export async function apiStatus(platform: Platform, token: string, pathname = '/api/courses'): Promise<number> {
  const response = await fetch(`${platform.baseUrl}${pathname}`, { headers: { authorization: `Bearer ${token}` } });
  await response.text();
  return response.status;
}
