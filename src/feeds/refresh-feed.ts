/**
 * The refresh of one feed: the processor of the `feed-refresh` queue, and the one place that
 * orders the steps of the flow (reference: feed-refresh.md, refresh_feed):
 *
 *   1. take the domain's turn (domain-gate.ts); not yet → a routine BlockedError: the worker
 *      factory moves the job to delayed for the wait without spending an attempt, logged at
 *      debug. The domain travels in the job (payload `domain`) once known, so this comes before
 *      any database work; the feed row is read alongside. A job that waits moves to priority 0
 *      so that it runs as soon as its turn comes, ahead of fresh work.
 *   2. the feed (deleted → done, nothing scheduled)
 *   3. take the feed lock with the job id (taken by another job → done, no work, nothing scheduled)
 *      A turn not used because of 2 or 3 is given back at once (the next job in line gets it).
 *   4. conditional GET (fetch-feed.ts) through the outbound policy (RefreshDeps.dispatcher), then
 *      release the domain, handing its next turn to the first job in line (moved to exactly then).
 *      A redirect to another host ends the turn on the old host (released as in 4) and waits, in
 *      the worker slot, for the new host's turn before its request: the spacing applies to every
 *      host actually requested. The wait is bounded by the time limit, not the fetch timeout.
 *   5. parse (parse-feed.ts) and upsert the first FEED_MAX_ITEMS_PER_DOCUMENT articles (at most
 *      ARTICLES_KEEP_PER_FEED) in batches (article-store.ts)
 *   6. record the outcome on the feed row (feed-store.ts)
 *   7. release the lock, then ask for the next periodic refresh (feed-scheduler.ts)
 *
 * The lock is taken only with the domain's turn, so two jobs of one feed (one domain) meet at
 * the lock only when a holder's lease ran out; a job waiting for its turn never holds it.
 * Step 7 comes after the release on purpose: a job that found the lock taken ended without
 * scheduling anything while the holder still held it, so the holder's schedulePeriodic,
 * coming after the release, sees that job either still active (its successor is stored) or
 * finished (a fresh job is created), and the chain goes on either way.
 *
 * Failures (refresh-failure.ts): a retryable failure with attempts left is thrown as such and
 * BullMQ retries the same job with backoff (Retry-After, when longer, sets the delay); the feed
 * shows status retrying with the reason as its lastError, nothing is scheduled. A permanent failure, or the last attempt, is recorded on the feed
 * (status error, errorCount + 1, lastError) and the next periodic refresh backs off. A failure on
 * our side rather than the feed's: the database or Redis unreachable is thrown as it is, and the
 * worker factory delays the job without spending an attempt (its final failure is never decided
 * while it could not be recorded); any other one (a bug, a refused statement) is a failure like
 * the others on its last attempt, recorded as `internal_error` (the detail goes to the log only),
 * and so is a failure whose reason the database refuses to store: a feed's final failure always
 * leaves an error and a next refresh, and no feed stays `pending`.
 * The whole refresh runs under FEED_TIME_LIMIT_SECONDS; the lock outlives it (FEED_LOCK_TTL_SECONDS).
 *
 * Progress (Bull Board, GET /api/tasks/:id): the answer's status and size, items new and
 * updated, 304, the next refresh; one log line per step.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'bullmq';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/index.js';
import type { Feed } from '../generated/prisma/client.js';
import { BlockedError, PermanentError, RetryableError, toError } from '../errors.js';
import { dependencyDown } from '../lib/dependency-down.js';
import { withTimeout } from '../lib/timeout.js';
import type { Logger } from '../logging/logger.js';
import type { FeedRefreshPayload } from '../queues/payloads/feeds.js';
import type { ArticleStore } from './article-store.js';
import { domainOf, type DomainGate } from './domain-gate.js';
import type { FeedLock } from './feed-lock.js';
import type { FeedScheduler } from './feed-scheduler.js';
import { isFeedGone, type FeedStore } from './feed-store.js';
import { fetchFeed, type FetchFeedResult } from './fetch-feed.js';
import { delayUntil, nextAfterFailure, nextAfterSuccess } from './next-refresh.js';
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
  /** The encoding the document was read in. */
  encoding?: string;
  items?: number;
  inserted?: number;
  updated?: number;
  unchanged?: number;
  skippedItems?: number;
  /** Items past FEED_MAX_ITEMS_PER_DOCUMENT (or ARTICLES_KEEP_PER_FEED, when lower) that were not stored. */
  truncatedItems?: number;
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
  feeds: FeedStore;
  articles: ArticleStore;
  lock: FeedLock;
  gate: DomainGate;
  scheduler: FeedScheduler;
  /** Opens every connection of a feed request: the outbound policy (src/net/outbound-dispatcher.ts). */
  dispatcher: Dispatcher;
  metrics?: { refreshes: { inc(labels: { outcome: string }): void }; articles: { inc(n: number): void } };
}

class TimeLimitError extends FeedRefreshError {
  constructor(seconds: number) {
    super('timeout', `refresh exceeded its time limit of ${seconds} s`);
  }
}

/** Runs `work` with an abort signal that fires, and a rejection, at the time limit. */
function withTimeLimit<T>(seconds: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  return withTimeout(() => work(controller.signal), seconds * 1000, { error: () => new TimeLimitError(seconds), onExpire: () => controller.abort() });
}

/**
 * Longest sleep between two looks at another host's turn during a redirect: a hand-over may move
 * the job's place earlier, and a job active in a worker slot is not woken by it.
 */
const HOP_TURN_POLL_MS = 250;

/** What the feed's lastError says when the refresh failed on our side (never the detail: that is logged). */
export const INTERNAL_ERROR = 'internal_error: the refresh could not be completed on our side; it is tried again at the next refresh';

/** Where a refresh stands (the job's progress). */
export interface RefreshProgress {
  step: 'fetched' | 'stored' | 'not_modified' | 'failed';
  httpStatus?: number;
  bytes?: number;
  items?: number;
  inserted?: number;
  updated?: number;
  notModified?: boolean;
  nextRefreshAt?: string;
  error?: string;
}

export function createRefreshProcessor(deps: RefreshDeps) {
  const { settings, feeds, articles, lock, gate, scheduler, dispatcher } = deps;
  const maxRetryAfterMs = settings.maxBackoffMinutes * 60_000;
  const maxItems = Math.min(settings.maxItemsPerDocument, settings.articlesKeepPerFeed);

  /**
   * Takes the domain's turn, or delays the job until it comes (a routine BlockedError: the worker
   * factory moves the job to delayed without spending an attempt). A job that waits keeps its
   * domain in its data, so that its next wake takes the turn before touching the database, and
   * moves to priority 0, BullMQ's plain wait list, which is served before every prioritized job:
   * when its turn comes it runs at once instead of queueing behind fresh work.
   */
  async function takeTurn(job: Job<FeedRefreshPayload>, domain: string): Promise<void> {
    const wait = await gate.acquire(domain, job.id!);
    if (wait === 0) return;
    const answered = performance.now();
    if (job.data.domain !== domain) await job.updateData({ ...job.data, domain });
    if (job.priority !== 0) await job.changePriority({ priority: 0 });
    const left = Math.max(1, Math.round(wait - (performance.now() - answered)));
    throw new BlockedError(`waiting for the turn of ${domain}`, left, 'domain_spacing', { routine: true });
  }

  /**
   * Records a refresh's final failure on the feed; null when the feed is gone. A reason the
   * database refuses (the store strips what PostgreSQL cannot hold, so this would be a bug) is
   * recorded as INTERNAL_ERROR instead: a feed never stays without its outcome and its next
   * refresh. An outage is thrown (the caller waits for it).
   */
  async function recordFinalFailure(feedId: number, summary: string, logger: Logger): Promise<Feed | null> {
    try {
      return await feeds.recordFailure(feedId, summary);
    } catch (err) {
      if (isFeedGone(err)) return null;
      if (summary === INTERNAL_ERROR || dependencyDown(err)) throw err;
      logger.error({ feedId, err: toError(err).message }, 'recording the failure was refused; recorded as internal_error');
      return recordFinalFailure(feedId, INTERNAL_ERROR, logger);
    }
  }

  /**
   * Waits in the worker slot for `domain`'s turn (a redirect's host), keeping the job's place in
   * that domain's line; a wait cut short by the time limit gives the place back.
   */
  async function waitForTurn(job: Job, domain: string, signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const wait = await gate.acquire(domain, job.id!);
        if (wait === 0) return;
        await sleep(Math.min(wait, HOP_TURN_POLL_MS), undefined, { signal });
      }
    } catch (err) {
      await scheduler.handOver(domain, await gate.cancel(domain, job.id!)).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The conditional GET in the domain's turn (taken by the caller); the turn ends with the
   * exchange. A redirect to another host hands this turn on and takes that host's.
   */
  async function fetchInTurn(job: Job, feed: Feed, domain: string | undefined, signal: AbortSignal): Promise<FetchFeedResult> {
    if (!domain) throw new FeedRefreshError('invalid_url', `not a URL: ${feed.url.slice(0, 200)}`);
    let retryAfterMs = 0;
    // The domain whose turn this job holds (none while it waits for a redirect host's turn).
    let held: string | undefined = domain;
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
        dispatcher,
        // `next` is the URL's host name, as domainOf gives it.
        beforeHostChange: async (_from, next) => {
          if (next === held) return;
          if (held) await scheduler.handOver(held, await gate.release(held, job.id!));
          held = undefined;
          await waitForTurn(job, next, signal);
          held = next;
        },
      });
    } catch (err) {
      if (err instanceof FeedRefreshError) retryAfterMs = err.details.retryAfterMs ?? 0;
      throw err;
    } finally {
      if (held) await scheduler.handOver(held, await gate.release(held, job.id!, retryAfterMs));
    }
  }

  return async function refreshFeed(job: Job<FeedRefreshPayload, RefreshResult>, ctx: { logger: Logger }): Promise<RefreshResult> {
    const started = performance.now();
    const { feedId, trigger } = job.data;
    // Progress is for people: a Redis hiccup while reporting must not fail the refresh.
    let progress: RefreshProgress | undefined;
    const report = async (next: RefreshProgress, line: string) => {
      progress = { ...progress, ...next };
      await Promise.all([job.updateProgress({ ...progress }), job.log(line)]).catch(() => undefined);
    };
    const done = (r: Omit<RefreshResult, 'feedId' | 'trigger' | 'durationMs'>): RefreshResult => {
      deps.metrics?.refreshes.inc({ outcome: r.outcome === 'skipped' ? `skipped_${r.reason}` : r.outcome });
      return { feedId, trigger, ...r, durationMs: Math.round(performance.now() - started) };
    };

    // 1-2. The domain's turn. When the domain travels with the job the feed row is read alongside
    // (a waiting job wakes at its turn); else the row comes first, for its domain. A URL that is
    // not one has no domain: it fails as invalid_url below.
    let feed: Feed | null;
    let domain = job.data.domain;
    if (domain) {
      [feed] = await Promise.all([feeds.find(feedId), takeTurn(job, domain)]);
    } else {
      feed = await feeds.find(feedId);
      if (!feed) return done({ outcome: 'skipped', reason: 'feed_deleted' });
      domain = domainOf(feed.url);
      if (domain) await takeTurn(job, domain);
    }
    // From here until its request this job holds the domain's turn; a turn it does not use goes
    // back at once (cancel) so that the next job in line need not wait for its own slot.
    let turn = domain;
    const giveBackTurn = async () => {
      if (turn) await scheduler.handOver(turn, await gate.cancel(turn, job.id!));
      turn = undefined;
    };
    try {
      if (!feed) {
        await giveBackTurn();
        return done({ outcome: 'skipped', reason: 'feed_deleted' });
      }
      // 3. The feed lock.
      const taken = await lock.acquire(feedId, job.id!);
      if (!taken.acquired) {
        await giveBackTurn();
        return done({ outcome: 'skipped', reason: 'locked', lockedBy: taken.holder });
      }
      const feedDomain = domainOf(feed.url);
      if (feedDomain !== domain) {
        // The job carried a domain that is not its feed's (URLs do not change: a job made by hand?).
        await giveBackTurn();
        domain = feedDomain;
        if (domain) await takeTurn(job, domain);
        turn = domain;
      }
    } catch (err) {
      await giveBackTurn().catch(() => undefined);
      await lock.release(feedId, job.id!).catch(() => undefined);
      throw err;
    }
    // The request uses the turn now (fetchInTurn ends it with the exchange).
    turn = undefined;
    const current: Feed = feed;

    let next: Date;
    let result: Omit<RefreshResult, 'feedId' | 'trigger' | 'durationMs'>;
    try {
      try {
        result = await withTimeLimit(settings.timeLimitSeconds, async (signal) => {
          const fetched = await fetchInTurn(job, current, domain, signal);
          const now = new Date();
          next = nextAfterSuccess(now, current.refreshIntervalMinutes);
          if (fetched.kind === 'not_modified') {
            await feeds.recordNotModified(current, now, next);
            await report(
              { step: 'not_modified', httpStatus: 304, notModified: true, nextRefreshAt: next.toISOString() },
              `304 not modified; next refresh at ${next.toISOString()}`,
            );
            return { outcome: 'not_modified' as const, httpStatus: 304, nextRefreshAt: next.toISOString() };
          }
          await report(
            { step: 'fetched', httpStatus: fetched.status, bytes: fetched.body.byteLength, notModified: false },
            `answered ${fetched.status}, ${fetched.body.byteLength} bytes`,
          );
          const parsed = parseFeedDocument(fetched.body, fetched.contentType, fetched.finalUrl, { contentLocation: fetched.contentLocation });
          // A document may list any number of items: only the first ones are stored (more than a
          // feed keeps would be deleted by the feeds-trim-articles maintenance task again).
          const stored = parsed.articles.slice(0, maxItems);
          const counts = await articles.upsert(current, stored);
          await feeds.recordSuccess(current, {
            fetchedAt: now,
            nextRefreshAt: next,
            etag: fetched.etag,
            lastModified: fetched.lastModified,
            title: parsed.title,
            siteUrl: parsed.siteUrl,
            inserted: counts.inserted,
          });
          deps.metrics?.articles.inc(counts.inserted + counts.updated);
          await report(
            { step: 'stored', items: parsed.articles.length, inserted: counts.inserted, updated: counts.updated, nextRefreshAt: next.toISOString() },
            `${parsed.format}: ${parsed.articles.length} items, ${counts.inserted} new, ${counts.updated} updated, ${counts.unchanged} unchanged${parsed.skipped ? `, ${parsed.skipped} skipped` : ''}; next refresh at ${next.toISOString()}`,
          );
          return {
            outcome: 'refreshed' as const,
            httpStatus: fetched.status,
            format: parsed.format,
            encoding: parsed.encoding,
            items: parsed.articles.length,
            ...counts,
            skippedItems: parsed.skipped,
            truncatedItems: parsed.articles.length - stored.length,
            bytes: fetched.body.byteLength,
            nextRefreshAt: next.toISOString(),
          };
        });
      } catch (err) {
        if (isFeedGone(err)) return done({ outcome: 'skipped', reason: 'feed_deleted' });
        const failure = err instanceof FeedRefreshError ? err : undefined;
        // The database or Redis down: the worker factory delays the job, nothing is decided.
        if (!failure && dependencyDown(err)) throw err;
        const final = failure?.permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        if (!final) {
          if (failure?.detail)
            ctx.logger.debug({ feedId, failure: failure.failure, detail: failure.detail, attempt: job.attemptsMade + 1 }, 'feed refresh attempt failed');
          await report(
            { step: 'failed', error: failure?.summary ?? INTERNAL_ERROR },
            `attempt ${job.attemptsMade + 1} failed: ${failure?.summary ?? INTERNAL_ERROR}; retried`,
          );
          // The feed says it is retrying, and why, while it waits (best effort: the retry happens either way).
          await feeds.recordRetry(feedId, failure?.summary ?? INTERNAL_ERROR).catch((e) => {
            if (!isFeedGone(e)) ctx.logger.debug({ feedId, err: toError(e).message }, 'could not record the retry on the feed');
          });
          throw failure ? new FeedRetryError(failure.summary, failure.failure, failure.details.retryAfterMs) : err;
        }
        // The final failure, the feed's or ours: recorded on the feed with its next refresh (backing off).
        // Recording and scheduling need the database and Redis: should one be down, what they
        // throw is an outage, and the job waits for it (the worker factory) before deciding again.
        const summary = failure?.summary ?? INTERNAL_ERROR;
        if (!failure) ctx.logger.error({ feedId, err: toError(err).message }, 'feed refresh failed on our side; recorded as internal_error');
        const failed = await recordFinalFailure(feedId, summary, ctx.logger);
        if (!failed) return done({ outcome: 'skipped', reason: 'feed_deleted' });
        next = nextAfterFailure(new Date(), failed.refreshIntervalMinutes, failed.errorCount, settings.maxBackoffMinutes, failure?.details.retryAfterMs);
        await feeds.setNextRefresh(feedId, next);
        deps.metrics?.refreshes.inc({ outcome: `failed_${failure?.failure ?? 'internal_error'}` });
        if (failure)
          ctx.logger.info(
            { feedId, failure: failure.failure, detail: failure.detail, errorCount: failed.errorCount, nextRefreshAt: next },
            'feed refresh failed',
          );
        await report(
          { step: 'failed', error: summary, nextRefreshAt: next.toISOString() },
          `failed for good: ${summary}; next refresh at ${next.toISOString()}`,
        );
        await lock.release(feedId, job.id!);
        await scheduler.schedulePeriodic(feedId, delayUntil(next, new Date()), { reschedule: true, domain });
        if (!failure) throw err;
        throw failure.permanent ? new PermanentError(failure.summary, failure.failure) : new RetryableError(failure.summary, failure.failure);
      }
      await lock.release(feedId, job.id!);
      await scheduler.schedulePeriodic(feedId, delayUntil(next!, new Date()), { reschedule: true, domain });
      return done(result);
    } finally {
      await lock.release(feedId, job.id!).catch(() => undefined);
    }
  };
}
