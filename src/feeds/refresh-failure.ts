/**
 * Why a refresh failed, and what that means for retrying. Pure: no I/O.
 *
 * | class                   | cause                                                 | retried? |
 * |-------------------------|-------------------------------------------------------|----------|
 * | connection_failed       | no answer: DNS, refused, reset, TLS, not HTTP, or no  | yes      |
 * |                         | status line within FEED_FETCH_TIMEOUT_MS              |          |
 * | timeout                 | an answer whose body did not complete in time         | yes      |
 * | http_5xx                | 5xx (503 honours Retry-After)                         | yes      |
 * | rate_limited            | 429 (Retry-After honoured)                            | yes      |
 * | http_4xx                | 404, 410 and every other 4xx but 408/429              | no       |
 * | not_a_feed              | HTML page, malformed XML, unknown format, empty       | no       |
 * | too_large               | body over FEED_MAX_BYTES                              | no       |
 * | too_many_redirects      | redirect loop or more than FEED_MAX_REDIRECTS hops    | no       |
 * | invalid_url             | not http(s), or a bad Location                        | no       |
 * | destination_not_allowed | the URL or a redirect leads to an address the         | no       |
 * |                         | outbound policy refuses (src/net/outbound-policy.ts)  |          |
 *
 * What the user reads (the feed's lastError, the task's failedReason) never tells connection
 * failures apart: a closed port, a filtered one, a reset, a service that is not HTTP or one
 * that stays silent all read `connection_failed: could not connect, or no answer`, so that a feed
 * cannot be used to map ports. The cause (error code, address) is kept in `detail`, for the log.
 *
 * Retried classes use the job's attempts with backoff (Retry-After, when longer, sets the delay);
 * the others fail at once. Either way, once the refresh has failed for good the feed records
 * status=error, errorCount+1 and lastError, and its next periodic refresh backs off.
 */

export type FailureClass =
  | 'connection_failed'
  | 'timeout'
  | 'http_5xx'
  | 'rate_limited'
  | 'http_4xx'
  | 'not_a_feed'
  | 'too_large'
  | 'too_many_redirects'
  | 'invalid_url'
  | 'destination_not_allowed';

const RETRYABLE: ReadonlySet<FailureClass> = new Set(['connection_failed', 'timeout', 'http_5xx', 'rate_limited']);

export class FeedRefreshError extends Error {
  readonly permanent: boolean;

  constructor(
    readonly failure: FailureClass,
    message: string,
    readonly details: { httpStatus?: number; retryAfterMs?: number; detail?: string } = {},
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

  /** What happened, for the server log only (error codes, addresses): never shown to the user. */
  get detail(): string | undefined {
    return this.details.detail;
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

/** The one text of every connection failure (see the table). */
export const CONNECTION_FAILED_MESSAGE = 'could not connect, or no answer';

/** The chain of causes of an error, outermost first (undici wraps the socket's error in TypeError('fetch failed')). */
function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && out.length < 5; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

function describe(err: unknown): string {
  return causes(err)
    .map((e) => {
      const x = e as { code?: unknown; message?: unknown; detail?: unknown };
      return [x.code, x.detail ?? x.message].filter((v) => typeof v === 'string' && v).join(' ');
    })
    .filter(Boolean)
    .join(' <- ');
}

/**
 * A FeedRefreshError for whatever `fetch` or the body stream threw. `answered`: the server had
 * sent its status line and headers; `timedOut`: the fetch timeout fired. A refusal of the
 * outbound policy is permanent; everything else before an answer is one connection failure.
 */
export function classifyFetchError(err: unknown, at: { timedOut: boolean; answered: boolean }): FeedRefreshError {
  if (err instanceof FeedRefreshError) return err;
  const refused = causes(err).find((e) => (e as { code?: unknown })?.code === 'ERR_DESTINATION_NOT_ALLOWED') as
    | { message: string; detail?: string }
    | undefined;
  if (refused) return new FeedRefreshError('destination_not_allowed', refused.message, { detail: refused.detail }, { cause: err });
  const e = err as { name?: string };
  const timedOut = at.timedOut || e?.name === 'TimeoutError' || e?.name === 'AbortError';
  if (timedOut && at.answered) return new FeedRefreshError('timeout', 'no complete answer in time', { detail: describe(err) }, { cause: err });
  return new FeedRefreshError(
    'connection_failed',
    CONNECTION_FAILED_MESSAGE,
    { detail: timedOut ? `no answer in time (${describe(err)})` : describe(err) },
    { cause: err },
  );
}
