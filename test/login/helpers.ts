/**
 * What the login tests share: a consent driver that approves every authorization URL plat prints (a login may
 * print a second one when it registers again), ways to hand the callback back (the browser lands on it, or the
 * user pastes it on stdin), and small readers for plat's files.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot, type Home } from '../helpers/cli.js';
import type { Platform } from '../platform/index.mjs';

export const AUTHORIZE_URL = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/g;

/** How the callback reaches plat after consent. */
export type Deliver = (callbackUrl: string, child: ChildProcess) => Promise<void> | void;

/** The browser lands on the callback (plat's listener answers it). */
export const land: Deliver = async (callbackUrl) => {
  await fetch(callbackUrl).then((r) => r.text());
};

/** The user copies the address the browser ended on and pastes it into plat's stdin. */
export const paste: Deliver = (callbackUrl, child) => {
  child.stdin!.write(`${callbackUrl}\n`);
};

/**
 * An onStderr handler that approves each new authorization URL on the platform and delivers the callback.
 * `urls` lists the authorization URLs seen, `callbacks` the callback addresses the server redirected to.
 */
export function approving(platform: Platform, deliver: Deliver = land, options: { deny?: boolean } = {}) {
  const urls: string[] = [];
  const callbacks: string[] = [];
  const errors: string[] = [];
  return {
    urls,
    callbacks,
    errors,
    onStderr(stderr: string, child: ChildProcess) {
      for (const match of stderr.matchAll(AUTHORIZE_URL)) {
        const url = match[1]!;
        if (urls.includes(url)) continue;
        urls.push(url);
        void (async () => {
          try {
            const callback = await platform.approve(url, options);
            callbacks.push(callback);
            await deliver(callback, child);
          } catch (error) {
            errors.push((error as Error).message);
          }
        })();
      }
    },
  };
}

/** A query parameter of a URL. */
export const param = (url: string, name: string) => new URL(url).searchParams.get(name);

/** The port of the redirect URI an authorization URL names. */
export const redirectPort = (authorizeUrl: string) => Number(new URL(param(authorizeUrl, 'redirect_uri')!).port);

/** The scopes an authorization URL asks for, sorted. */
export const requestedScopes = (authorizeUrl: string) => (param(authorizeUrl, 'scope') ?? '').split(' ').filter(Boolean).sort();

/** PLAT_BROWSER that approves consent over HTTP and lands on the callback, like a person clicking Approve. */
export const APPROVING_BROWSER = `"${process.execPath}" "${path.join(repoRoot, 'test', 'platform', 'approve-browser.mjs')}"`;

export async function readProfile(home: Home, name = 'default'): Promise<Record<string, any>> {
  return JSON.parse(await readFile(path.join(home.configDir, 'profiles', `${name}.json`), 'utf8'));
}

/** The file-store session of a profile (PLAT_TOKEN_STORE=file, the test default). */
export async function readStoredSession(home: Home, name = 'default'): Promise<Record<string, any>> {
  return JSON.parse(await readFile(path.join(home.configDir, 'tokens', `${name}.json`), 'utf8'));
}

/** Every file under a directory with its text. */
export async function filesWithText(dir: string): Promise<Array<{ file: string; text: string }>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const files = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(file, 'utf8').catch(() => '') })));
}

/** The token and profile files (not the metadata cache or lock files). */
export async function sessionFiles(home: Home): Promise<string[]> {
  return (await filesWithText(home.configDir))
    .map(({ file }) => file)
    .filter((f) => !f.includes(`${path.sep}cache${path.sep}`) && !f.includes(`${path.sep}locks${path.sep}`));
}

/** Signs in on the default path (no browser, listener callback) and fails the test if that does not work. */
export async function signIn(home: Home, platform: Platform, args: string[] = [], env: Record<string, string | undefined> = {}) {
  const approval = approving(platform);
  const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { env, onStderr: approval.onStderr });
  if (result.code !== 0) throw new Error(`login failed (${result.code}):\n${result.stderr}\n${approval.errors.join('\n')}`);
  return { result, approval };
}

/** Calls the API directly with a token, as a third party would. */
export async function apiStatus(platform: Platform, token: string, pathname = '/api/courses'): Promise<number> {
  const response = await fetch(`${platform.baseUrl}${pathname}`, { headers: { authorization: `Bearer ${token}` } });
  await response.text();
  return response.status;
}
