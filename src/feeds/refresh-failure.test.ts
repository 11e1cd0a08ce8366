import { describe, expect, it } from 'vitest';
import { classifyFetchError, classifyStatus, FeedRefreshError, parseRetryAfter } from './refresh-failure.js';

describe('refresh failures', () => {
  it.each([
    [404, 'http_4xx', true],
    [410, 'http_4xx', true],
    [403, 'http_4xx', true],
    [408, 'timeout', false],
    [429, 'rate_limited', false],
    [500, 'http_5xx', false],
    [503, 'http_5xx', false],
  ] as const)('HTTP %i is %s (permanent: %s)', (status, cls, permanent) => {
    expect(classifyStatus(status)).toBe(cls);
    expect(new FeedRefreshError(classifyStatus(status), 'x').permanent).toBe(permanent);
  });

  it('treats not-a-feed, too large and redirect loops as permanent', () => {
    for (const cls of ['not_a_feed', 'too_large', 'too_many_redirects', 'invalid_url'] as const) {
      expect(new FeedRefreshError(cls, 'x').permanent).toBe(true);
    }
  });

  it('reads Retry-After as seconds or an HTTP date, capped and never negative', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now, 86_400_000)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now, 86_400_000)).toBe(60_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now, 86_400_000)).toBe(0);
    expect(parseRetryAfter('999999', now, 3_600_000)).toBe(3_600_000);
    expect(parseRetryAfter('soon', now, 1000)).toBeUndefined();
    expect(parseRetryAfter(null, now, 1000)).toBeUndefined();
  });

  it('classifies fetch errors: timeouts and network failures are retryable', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    expect(classifyFetchError(refused, false).failure).toBe('network');
    expect(classifyFetchError(refused, false).message).toBe('ECONNREFUSED');
    expect(classifyFetchError(new DOMException('aborted', 'AbortError'), true).failure).toBe('timeout');
    expect(classifyFetchError(new DOMException('t', 'TimeoutError'), false).permanent).toBe(false);
  });
});
