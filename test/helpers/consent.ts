/**
 * The one consent driver: it reads the authorization URLs plat prints on stderr and approves (or denies) each new
 * one on the reference platform over HTTP, as a person in a browser would, then hands the callback back to plat
 * (the browser lands on it, or the person pastes it). A login that registers again prints a second URL; it is
 * approved too.
 */
import type { ChildProcess } from 'node:child_process';
import type { Home, PlatResult, RunOptions } from './cli.js';
import type { Platform } from '../platform/index.mjs';

/** An authorization URL of the reference platform (http, or https when it serves TLS); group 1 is the URL. */
export const AUTHORIZE_URL = /(https?:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/;

/** Every authorization URL in `text`, in order. */
export function authorizeUrls(text: string): string[] {
  return [...text.matchAll(new RegExp(AUTHORIZE_URL.source, 'g'))].map((match) => match[1]!);
}

/** A query parameter of a URL. */
export const param = (url: string, name: string) => new URL(url).searchParams.get(name);

/** The port of the redirect URI an authorization URL names. */
export const redirectPort = (authorizeUrl: string) => Number(new URL(param(authorizeUrl, 'redirect_uri')!).port);

/** How the callback reaches plat after consent. */
export type Deliver = (callbackUrl: string, child: ChildProcess, authorizeUrl: string) => Promise<void> | void;

/** The browser lands on the callback (plat's listener answers it). */
const land: Deliver = async (callbackUrl) => {
  await fetch(callbackUrl).then((r) => r.text());
};

/** The user copies the address the browser ended on and pastes it into plat's stdin. */
export const paste: Deliver = (callbackUrl, child) => {
  child.stdin!.write(`${callbackUrl}\n`);
};

export interface ConsentOptions {
  deliver?: Deliver;
  deny?: boolean;
  /** Approve only the first URL (later ones are recorded, not answered). */
  firstOnly?: boolean;
  /** Called with each new URL as soon as it is seen, before consent (to act at that moment: a signal, a lock). */
  onUrl?: (url: string, child: ChildProcess) => void;
  /** Called when consenting fails (besides recording it in `errors`). */
  onError?: (error: Error, child: ChildProcess) => void;
}

export interface Consent extends Required<Pick<RunOptions, 'onStderr'>> {
  /** Authorization URLs seen, in order; `url` is the first. */
  urls: string[];
  url: string | undefined;
  /** Callback addresses the server redirected to. */
  callbacks: string[];
  /** What went wrong while consenting (the platform refused, the callback could not be delivered). */
  errors: string[];
}

export function approving(platform: Platform, options: ConsentOptions = {}): Consent {
  const deliver = options.deliver ?? land;
  const consent: Consent = {
    urls: [],
    get url() {
      return consent.urls[0];
    },
    callbacks: [],
    errors: [],
    onStderr(stderr, child) {
      for (const url of authorizeUrls(stderr)) {
        if (consent.urls.includes(url)) continue;
        consent.urls.push(url);
        options.onUrl?.(url, child);
        if (options.firstOnly && consent.urls.length > 1) continue;
        void (async () => {
          try {
            const callback = await platform.approve(url, { deny: options.deny });
            consent.callbacks.push(callback);
            await deliver(callback, child, url);
          } catch (error) {
            consent.errors.push((error as Error).message);
            options.onError?.(error as Error, child);
          }
        })();
      }
    },
  };
  return consent;
}

/** `plat login --no-browser --base-url <platform> …args`, approved; fails the test (with plat's stderr) if it fails. */
export async function signIn(
  home: Home,
  platform: Platform,
  args: string[] = [],
  env: Record<string, string | undefined> = {},
): Promise<{ result: PlatResult; consent: Consent }> {
  const consent = approving(platform);
  const result = await home.run(['login', '--no-browser', '--base-url', platform.baseUrl, ...args], { env, onStderr: consent.onStderr });
  if (result.code !== 0) throw new Error(`login failed (${result.code}):\n${result.stderr}\n${consent.errors.join('\n')}`);
  return { result, consent };
}
