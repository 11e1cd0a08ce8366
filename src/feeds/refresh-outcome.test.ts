import { describe, expect, it } from 'vitest';
import { BlockedError, DependencyDownError, PermanentError, RetryableError } from '../errors.js';
import { DestinationNotAllowedError } from '../net/outbound-policy.js';
import { FeedGoneError } from './feed-store.js';
import { classifyFetchError, classifyStatus, FeedRefreshError, type FailureClass } from './refresh-failure.js';
import { decideRefresh, FeedRetryError, INTERNAL_ERROR, type RefreshDecision } from './refresh-outcome.js';

const next = new Date('2026-01-01T01:00:00Z');
const failed = (error: unknown, attempt = 1, attempts = 3) => decideRefresh({ kind: 'failed', error, attempt, attempts });
const as = <K extends RefreshDecision['kind']>(d: RefreshDecision, kind: K) => {
  expect(d.kind).toBe(kind);
  return d as Extract<RefreshDecision, { kind: K }>;
};

describe('what a refresh outcome means', () => {
  it('a refresh, or a 304, is done: its result, and the next periodic refresh at the time it was recorded with', () => {
    const refreshed = { outcome: 'refreshed' as const, httpStatus: 200, items: 3, inserted: 3, nextRefreshAt: next.toISOString() };
    expect(decideRefresh({ kind: 'stored', outcome: refreshed, next })).toEqual({ kind: 'done', outcome: refreshed, next });
    const notModified = { outcome: 'not_modified' as const, httpStatus: 304, nextRefreshAt: next.toISOString() };
    expect(decideRefresh({ kind: 'stored', outcome: notModified, next })).toEqual({ kind: 'done', outcome: notModified, next });
  });

  it("the domain's turn not yet come delays the job for the wait, routinely, without spending an attempt", () => {
    const { error } = as(decideRefresh({ kind: 'turn_not_yet', domain: 'feeds.example', waitMs: 1234 }), 'delay');
    expect(error).toBeInstanceOf(BlockedError);
    expect(error).toMatchObject({ retryAfterMs: 1234, code: 'domain_spacing', routine: true, message: 'waiting for the turn of feeds.example' });
  });

  it('a deleted feed, before or during the refresh, and a lock held by another job are skipped', () => {
    expect(decideRefresh({ kind: 'feed_deleted' })).toEqual({ kind: 'skip', outcome: { outcome: 'skipped', reason: 'feed_deleted' } });
    expect(failed(new FeedGoneError(7))).toEqual({ kind: 'skip', outcome: { outcome: 'skipped', reason: 'feed_deleted' } });
    // Prisma's "record to update not found"
    expect(failed(Object.assign(new Error('not found'), { code: 'P2025' }), 3, 3).kind).toBe('skip');
    expect(decideRefresh({ kind: 'locked', holder: 'job-9' })).toEqual({ kind: 'skip', outcome: { outcome: 'skipped', reason: 'locked', lockedBy: 'job-9' } });
  });

  it.each(['connection_failed', 'timeout', 'http_5xx', 'rate_limited'] as const)(
    'a retryable failure (%s) with attempts left is retried: the feed shows why, BullMQ gets the Retry-After',
    (cls: FailureClass) => {
      const failure = new FeedRefreshError(cls, 'x', { retryAfterMs: cls === 'rate_limited' ? 30_000 : undefined });
      const d = as(failed(failure, 1, 3), 'retry');
      expect(d).toMatchObject({ summary: `${cls}: x`, failure, attempt: 1 });
      expect(d.error).toBeInstanceOf(FeedRetryError);
      expect(d.error).toMatchObject({ message: `${cls}: x`, code: cls, retryAfterMs: cls === 'rate_limited' ? 30_000 : undefined });
    },
  );

  it('a retryable failure on its last attempt fails for good: recorded, the next refresh honouring Retry-After, RetryableError', () => {
    const failure = new FeedRefreshError(classifyStatus(429), 'too many requests', { retryAfterMs: 60_000 });
    const d = as(failed(failure, 3, 3), 'fail');
    expect(d).toMatchObject({ summary: 'rate_limited: too many requests', failure, label: 'rate_limited', retryAfterMs: 60_000 });
    expect(d.error).toBeInstanceOf(RetryableError);
    expect(d.error).not.toBeInstanceOf(FeedRetryError);
    expect(d.error).toMatchObject({ message: 'rate_limited: too many requests', code: 'rate_limited' });
  });

  it.each(['http_4xx', 'not_a_feed', 'too_large', 'too_many_redirects', 'invalid_url'] as const)(
    'a permanent failure (%s) fails for good on its first attempt: PermanentError',
    (cls: FailureClass) => {
      const d = as(failed(new FeedRefreshError(cls, 'x'), 1, 3), 'fail');
      expect(d).toMatchObject({ summary: `${cls}: x`, label: cls, retryAfterMs: undefined });
      expect(d.error).toBeInstanceOf(PermanentError);
      expect(d.error).toMatchObject({ code: cls });
    },
  );

  it('a request the outbound policy refuses fails for good at once, naming the host only', () => {
    const refused = classifyFetchError(
      Object.assign(new TypeError('fetch failed'), { cause: new DestinationNotAllowedError('meta.example', '169.254.169.254', 'link_local') }),
      {
        timedOut: false,
        answered: false,
      },
    );
    const d = as(failed(refused, 1, 3), 'fail');
    expect(d.label).toBe('destination_not_allowed');
    expect(d.summary).toMatch(/^destination_not_allowed: meta\.example is not an allowed destination/);
    expect(d.summary).not.toMatch(/169\.254/);
    expect(d.error).toBeInstanceOf(PermanentError);
  });

  it('our database or Redis down is an outage: thrown as it is, nothing recorded, whatever the attempt', () => {
    for (const error of [
      new DependencyDownError('database', 'the database is unreachable'),
      new Error('Connection is closed.'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
    ]) {
      expect(failed(error, 3, 3)).toEqual({ kind: 'outage', error });
    }
    // The feed's own connection failure is the feed's, not an outage, though it reads alike.
    const feedSide = classifyFetchError(
      Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }),
      { timedOut: false, answered: false },
    );
    expect(failed(feedSide, 1, 3).kind).toBe('retry');
  });

  it('a failure on our side (a bug) is retried as it is, then recorded as internal_error and thrown as it is', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    const retry = as(failed(bug, 1, 2), 'retry');
    expect(retry).toMatchObject({ summary: INTERNAL_ERROR, failure: undefined, error: bug });
    const fail = as(failed(bug, 2, 2), 'fail');
    expect(fail).toMatchObject({ summary: INTERNAL_ERROR, failure: undefined, label: 'internal_error', retryAfterMs: undefined, error: bug });
  });

  it('a job with a single attempt fails for good on its first retryable failure', () => {
    expect(failed(new FeedRefreshError('http_5xx', 'HTTP 503'), 1, 1).kind).toBe('fail');
  });
});
