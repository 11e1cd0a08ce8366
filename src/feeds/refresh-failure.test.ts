import { describe, expect, it } from 'vitest';
import { DestinationNotAllowedError, NOT_ALLOWED_HINT } from '../net/outbound-policy.js';
import { classifyFetchError, classifyStatus, CONNECTION_FAILED_MESSAGE, FeedRefreshError, parseRetryAfter } from './refresh-failure.js';

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
    for (const cls of ['not_a_feed', 'too_large', 'too_many_redirects', 'invalid_url', 'destination_not_allowed'] as const) {
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

  // undici rejects with TypeError('fetch failed') whose cause is the socket's error.
  const fetchFailed = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause });
  const before = { timedOut: false, answered: false };

  it('reads every connection failure before an answer the same, retryable, with the cause kept for the log only', () => {
    const failures = [
      fetchFailed(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })),
      fetchFailed(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })),
      fetchFailed(Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' })),
      fetchFailed(Object.assign(new Error('getaddrinfo ENOTFOUND x.invalid'), { code: 'ENOTFOUND' })),
      fetchFailed(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })),
      fetchFailed(Object.assign(new Error('Response does not match the HTTP/1.1 protocol (Expected HTTP/)'), { code: 'HPE_INVALID_CONSTANT' })),
      new DOMException('the fetch timed out', 'TimeoutError'),
    ];
    const read = failures.map((err, i) => classifyFetchError(err, { timedOut: i === failures.length - 1, answered: false }));
    for (const f of read) {
      expect(f.failure).toBe('connection_failed');
      expect(f.summary).toBe(`connection_failed: ${CONNECTION_FAILED_MESSAGE}`);
      expect(f.permanent).toBe(false);
    }
    expect(read[0]!.detail).toMatch(/ECONNREFUSED 127\.0\.0\.1:6379/);
    expect(read[5]!.detail).toMatch(/HPE_INVALID_CONSTANT/);
    expect(read[6]!.detail).toMatch(/no answer in time/);
  });

  it('reads a body that did not complete in time as a timeout', () => {
    const f = classifyFetchError(new DOMException('t', 'TimeoutError'), { timedOut: true, answered: true });
    expect(f.failure).toBe('timeout');
    expect(f.permanent).toBe(false);
  });

  it('reads a refusal of the outbound policy as destination_not_allowed, permanent, naming the host only', () => {
    const f = classifyFetchError(fetchFailed(new DestinationNotAllowedError('meta.example', '169.254.169.254', 'link_local')), before);
    expect(f.failure).toBe('destination_not_allowed');
    expect(f.permanent).toBe(true);
    expect(f.summary).toBe(`destination_not_allowed: meta.example is not an allowed destination${NOT_ALLOWED_HINT}`);
    expect(f.detail).toBe('meta.example → 169.254.169.254: link_local');
  });
});
