/**
 * oauth4webapi reports protocol problems with stable codes; this turns them into sentences a user can act on,
 * with the contract's exit codes. Server-supplied text is sanitised (one line, bounded) before it is shown.
 */
import * as oauth from 'oauth4webapi';
import { AuthError, ExitCode, PlatError } from '../errors.js';
import { sanitize } from '../terminal/text.js';
import { bodyReadError } from '../http/body-error.js';

/** The person (or the server for them) refused consent: the session layer adds the command to try again. */
export class ConsentDeniedError extends AuthError {
  constructor(message: string) {
    super(message);
    this.name = 'ConsentDeniedError';
  }
}

/** What plat was doing, for the sentence: "discovering the authorization server", "registering plat", ... */
export type Step = string;


/** The OAuth error body of a failed request, if that is what the error is. */
export function oauthErrorOf(error: unknown): { error: string; description?: string; status: number } | undefined {
  if (error instanceof oauth.ResponseBodyError) {
    return {
      error: sanitize(error.error, 80),
      description: error.error_description ? sanitize(error.error_description) : undefined,
      status: error.status,
    };
  }
  return undefined;
}

function describeOAuthError(e: { error: string; description?: string }): string {
  return e.description ? `${e.error}: ${e.description}` : e.error;
}

/**
 * Maps any error from an oauth4webapi request/process pair to a PlatError. Errors that are already PlatErrors
 * (network failures from our fetch, interrupts) pass through unchanged.
 */
export function toPlatError(error: unknown, step: Step, origin: string): PlatError {
  if (error instanceof PlatError) return error;
  const body = oauthErrorOf(error);
  if (body) {
    return new PlatError(`The server refused ${step} (${describeOAuthError(body)}).`, ExitCode.failure, { cause: error });
  }
  if (error instanceof oauth.AuthorizationResponseError) {
    const code = sanitize(error.error, 80);
    const description = error.error_description ? ` (${sanitize(error.error_description)})` : '';
    if (code === 'access_denied') return new ConsentDeniedError(`Access was denied in the browser${description}.`);
    return new AuthError(`The authorization server returned an error instead of a code: ${code}${description}.`);
  }
  if (error instanceof oauth.OperationProcessingError) {
    const what = sanitize(error.message, 160).replace(/^"response" /, 'the response ');
    switch (error.code) {
      case oauth.RESPONSE_IS_NOT_JSON:
      case oauth.PARSE_ERROR: {
        // Reading the body failed rather than parsing it: it broke off, stalled, was too large, or Ctrl-C.
        const broken = bodyFailure(error.cause, origin);
        if (broken) return broken;
        const type = contentTypeOf(error.cause);
        const status = statusOf(error.cause);
        if (status !== undefined && status >= 400) {
          return new PlatError(
            `While ${step}, ${origin} answered with HTTP ${status}${type ? ` (${type})` : ''} instead of an OAuth response. Try again later, or check the base URL.`,
            ExitCode.failure,
            { cause: error },
          );
        }
        if (error.code === oauth.PARSE_ERROR) {
          return new PlatError(
            `While ${step}, ${origin} sent JSON that cannot be parsed (cut short, or not JSON at all). Try again later, or check the base URL.`,
            ExitCode.failure,
            { cause: error },
          );
        }
        return new PlatError(
          `While ${step}, ${origin} did not answer with JSON${type ? ` (it sent ${type})` : ''}. Check that the base URL is the platform API, or try again later.`,
          ExitCode.failure,
          { cause: error },
        );
      }
      case oauth.RESPONSE_IS_NOT_CONFORM: {
        const status = statusOf(error.cause);
        return new PlatError(
          `While ${step}, ${origin} answered with an unexpected HTTP ${status ?? 'status'}. Try again later, or check the base URL.`,
          ExitCode.failure,
          { cause: error },
        );
      }
      case oauth.HTTP_REQUEST_FORBIDDEN:
      case oauth.REQUEST_PROTOCOL_FORBIDDEN:
        return new PlatError(
          `While ${step}, the server named an endpoint that is not https:// (plat refuses to send credentials over plain http except to loopback).`,
          ExitCode.failure,
          { cause: error },
        );
      case oauth.JSON_ATTRIBUTE_COMPARISON:
      case oauth.JWT_CLAIM_COMPARISON:
        return new PlatError(`While ${step}, the server's answer did not match what it had announced (${what}).`, ExitCode.failure, {
          cause: error,
        });
      case oauth.MISSING_SERVER_METADATA:
      case oauth.INVALID_SERVER_METADATA:
        return new PlatError(`The server's metadata is unusable for ${step} (${what}).`, ExitCode.failure, { cause: error });
      default:
        return new PlatError(`While ${step}, the server broke the protocol (${what}).`, ExitCode.failure, { cause: error });
    }
  }
  if (error instanceof oauth.UnsupportedOperationError) {
    if (/token_type/.test(error.message)) {
      const type = (error.cause as { body?: { token_type?: unknown } } | undefined)?.body?.token_type;
      return new PlatError(
        `While ${step}, the server issued a "${sanitize(type, 40)}" token; plat only supports Bearer tokens. Ask the platform's administrators, or check the base URL.`,
        ExitCode.failure,
        { cause: error },
      );
    }
    return new PlatError(`While ${step}: ${sanitize(error.message)}.`, ExitCode.failure, { cause: error });
  }
  if (error instanceof TypeError && /^ERR_INVALID_ARG/.test((error as { code?: string }).code ?? '')) {
    // oauth4webapi validates response members with these (a negative expires_in, a missing access_token).
    return new PlatError(`While ${step}, the server sent an invalid response (${sanitize(error.message)}).`, ExitCode.failure, {
      cause: error,
    });
  }
  return new PlatError(`While ${step}: ${sanitize((error as Error)?.message ?? error)}.`, ExitCode.failure, { cause: error });
}

function statusOf(cause: unknown): number | undefined {
  return cause && typeof cause === 'object' && 'status' in cause ? Number((cause as Response).status) : undefined;
}

function contentTypeOf(cause: unknown): string | undefined {
  const headers = cause && typeof cause === 'object' && 'headers' in cause ? (cause as Response).headers : undefined;
  const type = headers?.get?.('content-type');
  return type ? sanitize(type.split(';')[0], 60) : undefined;
}

/**
 * The error a response body failed with while being read, as plat reports it: our fetch's own (too large) as is, a
 * socket that broke off or stalled as the network failure it is (exit 3), Ctrl-C as an interruption.
 */
/** The protocol's overall deadline (http.ts PROTOCOL_DEADLINE_MS), as said to the person. */
const PROTOCOL_DEADLINE_SECONDS = 30;

/** A body that broke off, stalled or was cut by Ctrl-C, as the network failure it is; undefined for anything else. */
export function bodyFailure(cause: unknown, origin: string): PlatError | undefined {
  const failure = cause as { code?: unknown; name?: unknown } | undefined;
  const stream = typeof failure?.code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(failure.code);
  if (cause instanceof PlatError || failure?.name === 'AbortError' || failure?.name === 'TimeoutError' || stream) {
    return bodyReadError(cause, new URL(origin), { onTimeout: `plat waits ${PROTOCOL_DEADLINE_SECONDS} s for the whole answer; try again later.` });
  }
  return undefined;
}

