/**
 * Why a refresh failed, and what that means for retrying. Pure: no I/O.
 *
 * | class              | cause                                              | retried? |
 * |--------------------|----------------------------------------------------|----------|
 * | network            | DNS, refused, reset, TLS                           | yes      |
 * | timeout            | no complete answer within FEED_FETCH_TIMEOUT_MS    | yes      |
 * | http_5xx           | 5xx (503 honours Retry-After)                      | yes      |
 * | rate_limited       | 429 (Retry-After honoured)                         | yes      |
 * | http_4xx           | 404, 410 and every other 4xx but 408/429           | no       |
 * | not_a_feed         | HTML page, malformed XML, unknown format, empty    | no       |
 * | too_large          | body over FEED_MAX_BYTES                           | no       |
 * | too_many_redirects | redirect loop or more than FEED_MAX_REDIRECTS hops | no       |
 * | invalid_url        | not http(s), or a bad Location                     | no       |
 *
 * Retried classes use the job's attempts with backoff (Retry-After, when longer, sets the delay);
 * the others fail at once. Either way, once the refresh has failed for good the feed records
 * status=error, errorCount+1 and lastError, and its next periodic refresh backs off.
 */

export type FailureClass =
  | 'network'
  | 'timeout'
  | 'http_5xx'
  | 'rate_limited'
  | 'http_4xx'
  | 'not_a_feed'
  | 'too_large'
  | 'too_many_redirects'
  | 'invalid_url';

const RETRYABLE: ReadonlySet<FailureClass> = new Set(['network', 'timeout', 'http_5xx', 'rate_limited']);

export class FeedRefreshError extends Error {
  readonly permanent: boolean;

  constructor(
    readonly failure: FailureClass,
    message: string,
    readonly details: { httpStatus?: number; retryAfterMs?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FeedRefreshError';
    this.permanent = !RETRYABLE.has(failure);
  }

  /** The line stored in the feed's lastError. */
  get summary(): string {
    return `${this.failure}: ${this.message}`;
  }
}

/** The failure class of an HTTP status that is not a success, a 304 or a redirect. */
export function classifyStatus(status: number): FailureClass {
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'http_5xx';
  return 'http_4xx';
}

/**
 * Retry-After as milliseconds from `now`: delta-seconds or an HTTP date. Undefined when absent
 * or unreadable; never negative; capped at `capMs`.
 */
export function parseRetryAfter(value: string | null | undefined, now: number, capMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), capMs);
}

/** A FeedRefreshError for whatever `fetch` threw (network failure, abort, timeout). */
export function classifyFetchError(err: unknown, timedOut: boolean): FeedRefreshError {
  if (err instanceof FeedRefreshError) return err;
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (timedOut || e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new FeedRefreshError('timeout', 'no complete answer in time', {}, { cause: err });
  }
  // undici reports DNS, refused, reset and TLS failures as TypeError('fetch failed') with a coded cause.
  const reason = e?.cause?.code || e?.cause?.message || e?.message || 'request failed';
  return new FeedRefreshError('network', reason, {}, { cause: err });
}
