/**
 * What a refresh's outcome means for the job and the feed: the one decision table of the feed
 * refresh (refresh-feed.ts carries it out). Pure: no I/O, no clock.
 *
 * | what happened                              | decision | the job                          | the feed                         |
 * |--------------------------------------------|----------|----------------------------------|----------------------------------|
 * | the domain's turn is not yet               | delay    | delayed until it (BlockedError,  | untouched                        |
 * |                                            |          | routine, no attempt spent)       |                                  |
 * | the feed is gone (before or during)        | skip     | done, `skipped: feed_deleted`    | none; nothing scheduled          |
 * | another job holds the feed's lock          | skip     | done, `skipped: locked`          | untouched; nothing scheduled     |
 * | refreshed, or 304 not modified             | done     | done with the result             | recorded; next periodic refresh  |
 * | our database or Redis is down              | outage   | thrown as it is: the worker      | untouched (nothing is decided    |
 * |                                            |          | factory delays it, no attempt    | while it could not be recorded)  |
 * | a retryable failure (refresh-failure.ts),  | retry    | FeedRetryError: BullMQ retries   | `retrying` with the reason       |
 * | or one on our side, with attempts left     |          | with backoff (or Retry-After)    |                                  |
 * | a permanent failure (4xx, not a feed, too  | fail     | PermanentError                   | error, errorCount + 1, lastError;|
 * | large, redirects, bad URL, refused by the  |          |                                  | next refresh backs off           |
 * | outbound policy)                           |          |                                  |                                  |
 * | a retryable failure on its last attempt    | fail     | RetryableError                   | as above                         |
 * | a failure on our side on its last attempt  | fail     | the error as it is               | as above, lastError INTERNAL_ERROR |
 */
import { dependencyDown } from '../lib/dependency-down.js';
import { BlockedError, PermanentError, RetryableError } from '../errors.js';
import { isFeedGone } from './feed-store.js';
import { FeedRefreshError } from './refresh-failure.js';
import type { RefreshOutcome } from './refresh-report.js';

/** A retryable failure that may ask for a longer first delay (Retry-After). */
export class FeedRetryError extends RetryableError {
  constructor(
    message: string,
    code: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message, code);
  }
}

/** What the feed's lastError says when the refresh failed on our side (never the detail: that is logged). */
export const INTERNAL_ERROR = 'internal_error: the refresh could not be completed on our side; it is tried again at the next refresh';

/** What happened to one run of a refresh job. */
export type RefreshHappening =
  | { kind: 'turn_not_yet'; domain: string; waitMs: number }
  | { kind: 'feed_deleted' }
  | { kind: 'locked'; holder: string }
  /** Fetched, parsed, stored and recorded (refreshed or not modified); `next` is the next periodic refresh. */
  | { kind: 'stored'; outcome: RefreshOutcome; next: Date }
  /** The fetch, the parse or the store threw; `attempt` is this attempt's number (1-based) of `attempts`. */
  | { kind: 'failed'; error: unknown; attempt: number; attempts: number };

export type RefreshDecision =
  | { kind: 'delay'; error: BlockedError }
  | { kind: 'skip'; outcome: RefreshOutcome }
  | { kind: 'done'; outcome: RefreshOutcome; next: Date }
  | { kind: 'outage'; error: unknown }
  | {
      kind: 'retry';
      /** What the feed shows while it waits (its lastError). */
      summary: string;
      /** The classed failure, when it is the feed's (undefined: ours). */
      failure: FeedRefreshError | undefined;
      attempt: number;
      /** Thrown to BullMQ. */
      error: unknown;
    }
  | {
      kind: 'fail';
      summary: string;
      failure: FeedRefreshError | undefined;
      /** The metric's outcome label (failed_<label>). */
      label: string;
      /** The server's Retry-After: the next refresh comes no sooner. */
      retryAfterMs: number | undefined;
      error: unknown;
    };

export function decideRefresh(happened: RefreshHappening): RefreshDecision {
  switch (happened.kind) {
    case 'turn_not_yet':
      return {
        kind: 'delay',
        error: new BlockedError(`waiting for the turn of ${happened.domain}`, happened.waitMs, 'domain_spacing', { routine: true }),
      };
    case 'feed_deleted':
      return { kind: 'skip', outcome: { outcome: 'skipped', reason: 'feed_deleted' } };
    case 'locked':
      return { kind: 'skip', outcome: { outcome: 'skipped', reason: 'locked', lockedBy: happened.holder } };
    case 'stored':
      return { kind: 'done', outcome: happened.outcome, next: happened.next };
    case 'failed':
      return decideFailure(happened);
  }
}

function decideFailure({ error, attempt, attempts }: Extract<RefreshHappening, { kind: 'failed' }>): RefreshDecision {
  if (isFeedGone(error)) return decideRefresh({ kind: 'feed_deleted' });
  const failure = error instanceof FeedRefreshError ? error : undefined;
  if (!failure && dependencyDown(error)) return { kind: 'outage', error };
  const summary = failure?.summary ?? INTERNAL_ERROR;
  const final = failure?.permanent || attempt >= attempts;
  if (!final) {
    const thrown = failure ? new FeedRetryError(failure.summary, failure.failure, failure.details.retryAfterMs) : error;
    return { kind: 'retry', summary, failure, attempt, error: thrown };
  }
  const thrown = !failure
    ? error
    : failure.permanent
      ? new PermanentError(failure.summary, failure.failure)
      : new RetryableError(failure.summary, failure.failure);
  return { kind: 'fail', summary, failure, label: failure?.failure ?? 'internal_error', retryAfterMs: failure?.details.retryAfterMs, error: thrown };
}
