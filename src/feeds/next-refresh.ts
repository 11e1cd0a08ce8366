/**
 * When a feed is refreshed next: a pure formula, no I/O.
 *
 * - After a success (or a 304) the next periodic refresh is one interval later.
 * - After a failed refresh (the last attempt failed, or a permanent failure) it backs off
 *   exponentially with the number of consecutive failures: interval × 2^errorCount, capped at
 *   FEED_MAX_BACKOFF_MINUTES (never below the interval itself). A Retry-After longer than that wins.
 * - A feed that was never fetched is due at once.
 */

const MINUTE = 60_000;

export interface ScheduleFacts {
  refreshIntervalMinutes: number;
  errorCount: number;
  lastFetchedAt: Date | null;
  nextRefreshAt: Date | null;
}

/** Spacing of periodic refreshes after `errorCount` consecutive failures (0 = healthy). */
export function refreshSpacingMs(intervalMinutes: number, errorCount: number, maxBackoffMinutes: number): number {
  const interval = intervalMinutes * MINUTE;
  if (errorCount <= 0) return interval;
  const cap = Math.max(maxBackoffMinutes, intervalMinutes) * MINUTE;
  // 2^errorCount grows past any cap quickly; stop before the float gets silly.
  return Math.min(interval * 2 ** Math.min(errorCount, 40), cap);
}

export function nextAfterSuccess(now: Date, intervalMinutes: number): Date {
  return new Date(now.getTime() + intervalMinutes * MINUTE);
}

export function nextAfterFailure(now: Date, intervalMinutes: number, errorCount: number, maxBackoffMinutes: number, retryAfterMs?: number): Date {
  const backoff = refreshSpacingMs(intervalMinutes, errorCount, maxBackoffMinutes);
  return new Date(now.getTime() + Math.max(backoff, retryAfterMs ?? 0));
}

/**
 * When the next periodic refresh of a feed is due, from what the database knows:
 * never fetched and never failed → now; failing → the stored backoff time; else last fetch + interval.
 */
export function dueAt(feed: ScheduleFacts, now: Date): Date {
  if (feed.errorCount > 0 && feed.nextRefreshAt) return feed.nextRefreshAt;
  if (!feed.lastFetchedAt) return now;
  return new Date(feed.lastFetchedAt.getTime() + feed.refreshIntervalMinutes * MINUTE);
}

/**
 * The due time after the interval changed from `oldIntervalMinutes` to the feed's current one.
 * A failing feed keeps its failure time and gets the backoff of the new interval.
 */
export function dueAfterIntervalChange(feed: ScheduleFacts, oldIntervalMinutes: number, maxBackoffMinutes: number, now: Date): Date {
  if (feed.errorCount > 0 && feed.nextRefreshAt) {
    const failedAt = feed.nextRefreshAt.getTime() - refreshSpacingMs(oldIntervalMinutes, feed.errorCount, maxBackoffMinutes);
    return new Date(failedAt + refreshSpacingMs(feed.refreshIntervalMinutes, feed.errorCount, maxBackoffMinutes));
  }
  return dueAt(feed, now);
}

/** Milliseconds from `now` until `at`, never negative. */
export function delayUntil(at: Date, now: Date): number {
  return Math.max(0, at.getTime() - now.getTime());
}
