/**
 * Every failure plat reports is a PlatError: a sentence or two for the user (what happened, what to do next) and
 * the contract's exit code. main.ts is the only place that turns one into output and an exit status.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  network: 3,
  auth: 4,
  scope: 5,
  interrupted: 130,
  /** Ended by SIGTERM (128 + 15). */
  terminated: 143,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class PlatError extends Error {
  readonly exitCode: ExitCodeValue;
  constructor(message: string, exitCode: ExitCodeValue = ExitCode.failure, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PlatError';
    this.exitCode = exitCode;
  }
}

/** Bad command line: unknown option, bad value. */
export class UsageError extends PlatError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.usage, options);
    this.name = 'UsageError';
  }
}

/** The server could not be reached: DNS, refused, TLS, timeout. */
export class NetworkError extends PlatError {
  /** The underlying code (ECONNRESET, UND_ERR_SOCKET, ...), for deciding whether a retry may help. */
  readonly code?: string;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, ExitCode.network, options);
    this.name = 'NetworkError';
    this.code = options?.code;
  }
}

/** Not logged in, or the server rejected who we are. */
export class AuthError extends PlatError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.auth, options);
    this.name = 'AuthError';
  }
}

/** A valid token that lacks a scope the request needs. */
export class ScopeError extends PlatError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.scope, options);
    this.name = 'ScopeError';
  }
}

/** Ctrl-C, or the command's own abort signal. */
export class InterruptedError extends PlatError {
  constructor(message = 'Interrupted.') {
    super(message, ExitCode.interrupted);
    this.name = 'InterruptedError';
  }
}

/**
 * Not a failure of plat's: the status of the program `plat exec` ran, handed through as plat's own. main.ts returns
 * it as is and prints `message` only when there is one (the program could not be started).
 */
export class ExitStatus extends Error {
  readonly status: number;
  constructor(status: number, message = '') {
    super(message);
    this.name = 'ExitStatus';
    this.status = status;
  }
}
