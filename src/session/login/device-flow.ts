/**
 * The person's part of a device login (RFC 8628): show where to go and which code to enter (the host on a line of
 * its own, RFC 8628 §5.4, and a QR code of the complete address on a terminal), open the browser only where there
 * is one to see, then poll at the server's interval — slow_down adds five seconds — until approval, denial,
 * expiry, --timeout or Ctrl-C.
 */
import type { Context } from '../../context.js';
import { AuthError, InterruptedError } from '../../errors.js';
import type { ClientCredentials } from '../../oauth/client.js';
import type { Discovery } from '../../oauth/discovery.js';
import { DeviceCodeExpiredError, DeviceCodeRejectedError, pollDeviceToken, startDeviceAuthorization, type DeviceAuthorization, type DeviceTokens } from '../../oauth/device.js';
import { sleep } from '../../sleep.js';
import type { DpopKey } from '../../oauth/dpop.js';
import { noLocalBrowser } from './consent.js';
import { deps as oauthDeps } from './client.js';

export interface DeviceWait {
  /** The key the tokens are to be bound to (DPoP), when the login makes one. */
  dpop?: DpopKey;
  scopes: string[];
  resource?: string;
  browser: boolean;
  timeoutSeconds: number;
  /** The same login again, as a command that works when pasted. */
  again: string;
}

export async function waitForDeviceApproval(ctx: Context, discovery: Discovery, credentials: ClientCredentials, input: DeviceWait): Promise<DeviceTokens> {
  const deps = await oauthDeps(ctx);
  const started = ctx.now();
  const device = await startDeviceAuthorization(deps, discovery.as, credentials, { scopes: input.scopes, resource: input.resource, now: started });
  ctx.secrets.remember(device.deviceCode);
  await show(ctx, device, input.browser);
  // RFC 8628 §3.2 expires_in: the person knows how long they have, as a span and as a time on their clock.
  ctx.io.err(`The code expires in ${span(device.expiresAt - started)}, at ${clockTime(device.expiresAt)}.`);
  const deadline = Math.min(device.expiresAt, started + input.timeoutSeconds * 1000);
  let interval = device.interval;
  const spinner = await ctx.io.spinner('Waiting for you to approve… (Ctrl-C to cancel)');
  try {
    for (;;) {
      const wait = Math.min(interval * 1000, deadline - ctx.now());
      if (wait <= 0) break;
      // Ctrl-C ends the wait at once, with exit 130.
      if (!(await sleep(wait, ctx.signal))) throw new InterruptedError('Login cancelled.');
      // An expired code is not polled for: the server can only say so (expired_token), or not even that.
      if (ctx.now() >= device.expiresAt) break;
      const answer = await pollDeviceToken(deps, discovery.as, credentials, {
        deviceCode: device.deviceCode,
        dpop: input.dpop,
        resource: input.resource,
        requestedScopes: input.scopes,
        now: ctx.now(),
      }).catch((error: unknown) => {
        // The server's expiry can come first (servers count in whole seconds, and from when they made the code):
        // the same fact as plat's own clock running out, said the same way, with the login to run again.
        if (error instanceof DeviceCodeExpiredError) throw expired(input.again, Math.min(ctx.now(), device.expiresAt));
        // A server that forgets an expired code answers invalid_grant instead of expired_token: the same fact.
        if (error instanceof DeviceCodeRejectedError && ctx.now() >= device.expiresAt - EXPIRY_SLACK_MS) throw expired(input.again, device.expiresAt);
        throw error;
      });
      if ('session' in answer) return answer;
      // RFC 8628 §3.5: slow_down means five seconds more between polls, from now on.
      if (answer.kind === 'slow_down') interval += 5;
    }
  } finally {
    spinner.stop();
  }
  if (ctx.now() >= device.expiresAt) throw expired(input.again, device.expiresAt);
  throw new AuthError(
    `No approval within ${input.timeoutSeconds} s. Run ${input.again} again (add --timeout <seconds> if you need longer than ${input.timeoutSeconds}).`,
  );
}

/** Clocks differ: a code the server forgot within this much of its announced expiry has expired. */
const EXPIRY_SLACK_MS = 2_000;

function expired(again: string, at: number): AuthError {
  return new AuthError(`The code expired before anyone approved it (at ${clockTime(at)}). Run ${again} again.`);
}

/** A code's lifetime as a person says it: "10 minutes", "1 minute", "45 seconds". */
function span(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.round(seconds / 60);
  return `${minutes} minutes`;
}

/** A time on the person's clock (local time), hours and minutes: "14:32". */
function clockTime(ms: number): string {
  const at = new Date(ms);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

async function show(ctx: Context, device: DeviceAuthorization, browser: boolean): Promise<void> {
  const { io } = ctx;
  const target = device.verificationUriComplete ?? device.verificationUri;
  let opened = false;
  if (browser && !noLocalBrowser(ctx.env, process.platform)) opened = (await ctx.openUrl(target.href)).opened;
  io.err(opened ? 'Opened the sign-in page in your browser. If it is not there, open on any device:' : 'To sign in, open this address on any device (a phone works):');
  io.err(`  ${device.verificationUri.href}`);
  // RFC 8628 §5.4: a device code sent by someone else is phishing; the host is what the person can check.
  io.err(`  (check that the address is on ${device.verificationUri.host})`);
  io.err(`and enter the code:  ${io.bold(device.userCode)}`);
  if (device.verificationUriComplete && io.stderrIsTTY) {
    const qr = await qrCode(device.verificationUriComplete.href);
    const columns = (io.stderr as { columns?: number }).columns ?? 80;
    if (qr && qr.width <= columns) io.err(`Or scan this code, which carries the address and the code:\n${qr.text}`);
  }
}

/** A QR code drawn with half blocks (two rows a line); undefined when the encoder cannot be loaded. */
async function qrCode(text: string): Promise<{ text: string; width: number } | undefined> {
  try {
    const { renderUnicodeCompact } = await import('uqr');
    const drawn = renderUnicodeCompact(text, { border: 1 });
    return { text: drawn, width: Math.max(...drawn.split('\n').map((line) => line.length)) };
  } catch {
    return undefined;
  }
}
