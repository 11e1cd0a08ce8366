/**
 * The refresh of one feed: the processor of the `feed-refresh` queue, and the one place that
 * orders the steps of the flow (reference: feed-refresh.md, refresh_feed):
 *
 *   1. load the feed (deleted → done, nothing scheduled)
 *   2. take the feed lock with the job id (taken by another job → done, no work, nothing scheduled)
 *   3. take the domain's turn (not yet → a routine BlockedError: the worker factory moves the job
 *      to delayed for the wait without spending an attempt, logged at debug; the lock is released
 *      meanwhile)
 *   4. conditional GET (fetch-feed.ts), then release the domain
 *   5. parse (parse-feed.ts) and upsert the articles in batches (article-store.ts)
 *   6. record the outcome on the feed row
 *   7. release the lock, then ask for the next periodic refresh (feed-scheduler.ts)
 *
 * Step 7 comes after the release on purpose: a job that found the lock taken ended without
 * scheduling anything while the holder still held it, so the holder's schedulePeriodic,
 * coming after the release, sees that job either still active (its successor is stored) or
 * finished (a fresh job is created), and the chain goes on either way.
 *
 * Failures (refresh-failure.ts): a retryable failure with attempts left is thrown as such and
 * BullMQ retries the same job with backoff (Retry-After, when longer, sets the delay); nothing
 * is recorded or scheduled. A permanent failure, or the last attempt, is recorded on the feed
 * (status error, errorCount + 1, lastError) and the next periodic refresh backs off.
 * The whole refresh runs under FEED_TIME_LIMIT_SECONDS; the lock outlives it (FEED_LOCK_TTL_SECONDS).
 */
import type { Job } from 'bullmq';
import type { Config } from '../config/index.js';
import type { Feed } from '../generated/prisma/client.js';
import { BlockedError, PermanentError, RetryableError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { FeedRefreshPayload } from '../queues/payloads/feeds.js';
import { isFeedGone, type ArticleStore } from './article-store.js';
import { domainOf, type DomainGate } from './domain-gate.js';
import type { FeedLock } from './feed-lock.js';
import type { FeedScheduler } from './feed-scheduler.js';
import { fetchFeed, type FetchFeedResult } from './fetch-feed.js';
import { delayUntil, nextAfterFailure, nextAfterSuccess, refreshSpacingMs } from './next-refresh.js';
import { parseFeedDocument } from './parse-feed.js';
import { FeedRefreshError } from './refresh-failure.js';

export interface RefreshResult {
  feedId: number;
  trigger: FeedRefreshPayload['trigger'];
  outcome: 'refreshed' | 'not_modified' | 'skipped';
  /** Why a refresh was skipped: another job holds the lock, or the feed was deleted. */
  reason?: 'locked' | 'feed_deleted';
  /** The job holding the lock when skipped for that reason. */
  lockedBy?: string;
  httpStatus?: number;
  format?: string;
  items?: number;
  inserted?: number;
  updated?: number;
  unchanged?: number;
  skippedItems?: number;
  bytes?: number;
  durationMs: number;
  nextRefreshAt?: string;
}

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

export interface RefreshDeps {
  settings: Config['feeds'];
  store: ArticleStore;
  lock: FeedLock;
  gate: DomainGate;
  scheduler: FeedScheduler;
  metrics?: { refreshes: { inc(labels: { outcome: string }): void }; articles: { inc(n: number): void } };
}

class TimeLimitError extends FeedRefreshError {
  constructor(seconds: number) {
    super('timeout', `refresh exceeded its time limit of ${seconds} s`);
  }
}

/** Runs `work` with an abort signal that fires, and a rejection, at the time limit. */
async function withTimeLimit<T>(seconds: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new TimeLimitError(seconds));
    }, seconds * 1000);
  });
  try {
    return await Promise.race([work(controller.signal), limit]);
  } finally {
    clearTimeout(timer);
  }
}

export function createRefreshProcessor(deps: RefreshDeps) {
  const { settings, store, lock, gate, scheduler } = deps;
  const maxRetryAfterMs = settings.maxBackoffMinutes * 60_000;

  async function fetchWithDomainTurn(job: Job, feed: Feed, signal: AbortSignal): Promise<FetchFeedResult> {
    let domain: string;
    try {
      domain = domainOf(feed.url);
    } catch (err) {
      throw new FeedRefreshError('invalid_url', `not a URL: ${feed.url.slice(0, 200)}`, {}, { cause: err });
    }
    const wait = await gate.acquire(domain, job.id!);
    if (wait > 0) throw new BlockedError(`waiting for the turn of ${domain}`, wait, 'domain_spacing', { routine: true });
    let retryAfterMs = 0;
    try {
      return await fetchFeed(feed.url, {
        userAgent: settings.userAgent,
        timeoutMs: settings.fetchTimeoutMs,
        maxBytes: settings.maxBytes,
        maxRedirects: settings.maxRedirects,
        maxRetryAfterMs,
        etag: feed.etag,
        lastModified: feed.lastModified,
        signal,
      });
    } catch (err) {
      if (err instanceof FeedRefreshError) retryAfterMs = err.details.retryAfterMs ?? 0;
      throw err;
    } finally {
      const handOver = await gate.release(domain, job.id!, retryAfterMs);
      if (handOver) {
        const moved = await scheduler.moveToTurn(handOver.jobId, handOver.delayMs).catch(() => 'left' as const);
        if (moved === 'dropped') await gate.forget(domain, handOver.jobId);
      }
    }
  }

  return async function refreshFeed(job: Job<FeedRefreshPayload, RefreshResult>, ctx: { logger: Logger }): Promise<RefreshResult> {
    const started = performance.now();
    const { feedId, trigger } = job.data;
    const done = (r: Omit<RefreshResult, 'feedId' | 'trigger' | 'durationMs'>): RefreshResult => {
      deps.metrics?.refreshes.inc({ outcome: r.outcome === 'skipped' ? `skipped_${r.reason}` : r.outcome });
      return { feedId, trigger, ...r, durationMs: Math.round(performance.now() - started) };
    };

    const feed = await store.findFeed(feedId);
    if (!feed) return done({ outcome: 'skipped', reason: 'feed_deleted' });

    const taken = await lock.acquire(feedId, job.id!);
    if (!taken.acquired) return done({ outcome: 'skipped', reason: 'locked', lockedBy: taken.holder });

    let next: Date;
    let result: Omit<RefreshResult, 'feedId' | 'trigger' | 'durationMs'>;
    try {
      try {
        result = await withTimeLimit(settings.timeLimitSeconds, async (signal) => {
          const fetched = await fetchWithDomainTurn(job, feed, signal);
          const now = new Date();
          next = nextAfterSuccess(now, feed.refreshIntervalMinutes);
          if (fetched.kind === 'not_modified') {
            await store.recordNotModified(feed, now, next);
            return { outcome: 'not_modified' as const, httpStatus: 304, nextRefreshAt: next.toISOString() };
          }
          const parsed = parseFeedDocument(fetched.body, fetched.contentType, fetched.finalUrl);
          const counts = await store.upsertArticles(feed, parsed.articles);
          await store.recordSuccess(feed, {
            fetchedAt: now,
            nextRefreshAt: next,
            etag: fetched.etag,
            lastModified: fetched.lastModified,
            title: parsed.title,
            siteUrl: parsed.siteUrl,
            inserted: counts.inserted,
          });
          deps.metrics?.articles.inc(counts.inserted + counts.updated);
          return {
            outcome: 'refreshed' as const,
            httpStatus: fetched.status,
            format: parsed.format,
            items: parsed.articles.length,
            ...counts,
            skippedItems: parsed.skipped,
            bytes: fetched.body.byteLength,
            nextRefreshAt: next.toISOString(),
          };
        });
      } catch (err) {
        if (err instanceof BlockedError) throw err; // the worker factory delays the job (routine: logged at debug)
        if (isFeedGone(err)) return done({ outcome: 'skipped', reason: 'feed_deleted' });
        const failure = err instanceof FeedRefreshError ? err : undefined;
        const final = failure?.permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        if (!final) throw failure ? new FeedRetryError(failure.summary, failure.failure, failure.details.retryAfterMs) : err;
        if (failure) {
          const failed = await store.recordFailure(feedId, failure.summary).catch((e) => {
            if (isFeedGone(e)) return null;
            throw e;
          });
          if (!failed) return done({ outcome: 'skipped', reason: 'feed_deleted' });
          next = nextAfterFailure(new Date(), failed.refreshIntervalMinutes, failed.errorCount, settings.maxBackoffMinutes, failure.details.retryAfterMs);
          await store.setNextRefresh(feedId, next);
          deps.metrics?.refreshes.inc({ outcome: `failed_${failure.failure}` });
          ctx.logger.info({ feedId, failure: failure.failure, errorCount: failed.errorCount, nextRefreshAt: next }, 'feed refresh failed');
        } else {
          // Our side failed (database, bug), not the feed: its schedule is kept as it was.
          next = new Date(Date.now() + refreshSpacingMs(feed.refreshIntervalMinutes, feed.errorCount, settings.maxBackoffMinutes));
        }
        await lock.release(feedId, job.id!);
        await scheduler.schedulePeriodic(feedId, delayUntil(next, new Date()), { reschedule: true });
        if (!failure) throw err;
        throw failure.permanent ? new PermanentError(failure.summary, failure.failure) : new RetryableError(failure.summary, failure.failure);
      }
      await lock.release(feedId, job.id!);
      await scheduler.schedulePeriodic(feedId, delayUntil(next!, new Date()), { reschedule: true });
      return done(result);
    } finally {
      await lock.release(feedId, job.id!).catch(() => undefined);
    }
  };
}
