/**
 * Errors classed by outcome. A job processor throws one of these and the worker factory maps it:
 *
 * - PermanentError  → BullMQ UnrecoverableError: the job fails at once, no retry (404, not a feed).
 * - RetryableError  → a plain failure: BullMQ retries with the queue's backoff.
 * - BlockedError    → the job is delayed by `retryAfterMs` without spending an attempt
 *                     (rate limited, blocked by the remote side, a busy domain).
 *
 * Anything else is treated as retryable. HTTP handlers use HttpError for 4xx/5xx answers.
 */

export class PlatformError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Retrying cannot help: the job fails without further attempts. */
export class PermanentError extends PlatformError {
  constructor(
    message: string,
    readonly code = 'permanent',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A transient failure: retried with backoff until the attempts run out. */
export class RetryableError extends PlatformError {
  constructor(
    message: string,
    readonly code = 'retryable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The remote side asked us to wait: the job is delayed, not failed. */
export class BlockedError extends PlatformError {
  /** A wait that is part of normal work (a rate limit's turn), logged at debug rather than warn. */
  readonly routine: boolean;

  constructor(
    message: string,
    readonly retryAfterMs: number,
    readonly code = 'blocked',
    options?: { cause?: unknown; routine?: boolean },
  ) {
    super(message, options);
    this.routine = options?.routine ?? false;
  }
}

/** An answer for an HTTP client: status, machine-readable code and, for bad input, the field. */
export class HttpError extends PlatformError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** A required service (Redis, the database) cannot be reached. */
export class DependencyDownError extends PlatformError {
  constructor(
    readonly dependency: 'redis' | 'database',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Whatever was thrown, as an Error. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === 'string') return new Error(value);
  try {
    return new Error(JSON.stringify(value));
  } catch {
    return new Error(String(value));
  }
}
