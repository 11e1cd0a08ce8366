/**
 * Errors classed by outcome, never by where they came from (docs/architecture.md#errors-by-outcome:
 * what the worker factory does with each in a job, and the status each is in a reply).
 *
 * Invariants: a job processor throws PermanentError (no retry), BlockedError (delayed without an
 * attempt) or anything else (retried); a domain serving a request throws one of the request
 * outcomes below, each with a machine-readable `code` and the `field` it concerns when the API names
 * one, and only the HTTP layer (src/http/error-reply.ts) turns it into a status.
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

/** What a request's outcome carries besides its message: the input field it concerns, details, a cause. */
export interface OutcomeOptions {
  field?: string;
  details?: unknown;
  cause?: unknown;
}

/** A request's outcome other than success (see the list at the top); `code` is machine-readable. */
export abstract class OutcomeError extends PlatformError {
  readonly field: string | undefined;
  readonly details: unknown;

  constructor(
    readonly code: string,
    message: string,
    options: OutcomeOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.field = options.field;
    this.details = options.details;
  }
}

/** The input passed its schema but cannot be accepted (a wrong current password, a role too high for the user). */
export class InvalidInputError extends OutcomeError {}

/** No credential, or one that is invalid, expired, logged out or ended. */
export class UnauthenticatedError extends OutcomeError {}

/** A valid credential whose role may not do this. */
export class ForbiddenError extends OutcomeError {}

/** No such thing, or none the caller may see. */
export class NotFoundError extends OutcomeError {}

/** It would clash with what exists: a name taken, a URL already subscribed, a limit reached. */
export class ConflictError extends OutcomeError {}

/** The thing exists, but its state does not allow this now: an inactive IP, a running job, the last admin. */
export class InvalidStateError extends OutcomeError {}

/** Too many attempts: try again after `retryAfterSeconds`. */
export class RateLimitedError extends OutcomeError {
  constructor(
    code: string,
    message: string,
    readonly retryAfterSeconds: number,
    options: OutcomeOptions = {},
  ) {
    super(code, message, { details: { retryAfterSeconds }, ...options });
  }
}

/** The request cannot be answered now (something not loaded yet, a dependency down); worth retrying later. */
export class UnavailableError extends OutcomeError {}

/** A required service (Redis, the database) cannot be reached: code `redis_unavailable` or `database_unavailable`. */
export class DependencyDownError extends UnavailableError {
  constructor(
    readonly dependency: 'redis' | 'database',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${dependency}_unavailable`, message, options);
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
