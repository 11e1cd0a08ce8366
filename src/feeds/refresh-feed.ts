/**
 * The refresh of one feed: the processor of the `feed-refresh` queue, and the one place that
 * orders the steps of the flow (reference: feed-refresh.md, refresh_feed). Each step is one call
 * in `refreshFeed`; the domain's turn is a DomainTurn (domain-turn.ts), what an outcome means is
 * decided by decideRefresh (refresh-outcome.ts, pure), and progress goes through RefreshReport.
 *
 *   1. take the domain's turn; not yet → a routine BlockedError: the worker factory moves the job
 *      to delayed for the wait without spending an attempt, logged at debug. The domain travels in
 *      the job (payload `domain`) once known, so this comes before any database work; the feed row
 *      is read alongside. A job that waits moves to priority 0 so that it runs as soon as its turn
 *      comes, ahead of fresh work.
 *   2. the feed (deleted → done, nothing scheduled), then the feed lock with the job id (taken by
 *      another job → done, no work, nothing scheduled). A turn not used because of either is given
 *      back at once (the next job in line gets it).
 *   3. under the time limit: the conditional GET (fetch-feed.ts) through the outbound policy
 *      (RefreshDeps.dispatcher), which ends the domain's turn, handing its next turn to the first
 *      job in line (moved to exactly then). A redirect to another host ends the turn on the old
 *      host and waits, in the worker slot, for the new host's turn before its request: the spacing
 *      applies to every host actually requested. The wait is bounded by the time limit, not the
 *      fetch timeout. Then parse (parse-feed.ts), upsert the first FEED_MAX_ITEMS_PER_DOCUMENT
 *      articles (at most ARTICLES_KEEP_PER_FEED) in batches (article-store.ts), and record the
 *      outcome on the feed row (feed-store.ts).
 *   4. carry out what that means (refresh-outcome.ts): on success or a final failure release the
 *      lock, then ask for the next periodic refresh (feed-scheduler.ts); on a retry record it.
 *   5. release the lock, whatever happened.
 *
 * The lock is taken only with the domain's turn, so two jobs of one feed (one domain) meet at
 * the lock only when a holder's lease ran out; a job waiting for its turn never holds it.
 * Scheduling comes after the release on purpose: a job that found the lock taken ended without
 * scheduling anything while the holder still held it, so the holder's schedulePeriodic,
 * coming after the release, sees that job either still active (its successor is stored) or
 * finished (a fresh job is created), and the chain goes on either way.
 *
 * Failures (refresh-failure.ts, refresh-outcome.ts): a retryable failure with attempts left is
 * thrown as such and BullMQ retries the same job with backoff (Retry-After, when longer, sets the
 * delay); the feed shows status retrying with the reason as its lastError, nothing is scheduled.
 * A permanent failure, or the last attempt, is recorded on the feed (status error, errorCount + 1,
 * lastError) and the next periodic refresh backs off. A failure on our side rather than the
 * feed's: the database or Redis unreachable is thrown as it is, and the worker factory delays the
 * job without spending an attempt (its final failure is never decided while it could not be
 * recorded); any other one (a bug, a refused statement) is a failure like the others on its last
 * attempt, recorded as `internal_error` (the detail goes to the log only), and so is a failure
 * whose reason the database refuses to store: a feed's final failure always leaves an error and a
 * next refresh, and no feed stays `pending`.
 * The whole of step 3 runs under FEED_TIME_LIMIT_SECONDS; the lock outlives it (FEED_LOCK_TTL_SECONDS).
 *
 * Progress (Bull Board, GET /api/tasks/:id): the answer's status and size, items new and
 * updated, 304, the next refresh; one log line per step.
 */
import type { Job } from 'bullmq';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/index.js';
import type { Feed } from '../generated/prisma/client.js';
import { toError } from '../errors.js';
import { dependencyDown } from '../services/dependency-down.js';
import { withTimeout } from '../lib/timeout.js';
import type { Logger } from '../logging/logger.js';
import type { FeedRefreshPayload } from '../queues/declarations/feeds.js';
import type { ArticleStore } from './article-store.js';
import { domainOf, type DomainGate } from './domain-gate.js';
import { DomainTurn } from './domain-turn.js';
import type { FeedLock } from './feed-lock.js';
import type { FeedScheduler } from './feed-scheduler.js';
import { isFeedGone, type FeedStore } from './feed-store.js';
import { fetchFeed, type FetchFeedResult } from './fetch-feed.js';
import { delayUntil, nextAfterFailure, nextAfterSuccess } from './next-refresh.js';
import { parseFeedDocument } from './parse-feed.js';
import { FeedRefreshError } from './refresh-failure.js';
import { decideRefresh, INTERNAL_ERROR, type RefreshDecision, type RefreshHappening } from './refresh-outcome.js';
import { RefreshReport, type RefreshMetrics, type RefreshResult } from './refresh-report.js';

export { FeedRetryError, INTERNAL_ERROR } from './refresh-outcome.js';
export type { RefreshProgress, RefreshResult } from './refresh-report.js';

export interface RefreshDeps {
  settings: Config['feeds'];
  feeds: FeedStore;
  articles: ArticleStore;
  lock: FeedLock;
  gate: DomainGate;
  scheduler: FeedScheduler;
  /** Opens every connection of a feed request: the outbound policy (src/net/outbound-dispatcher.ts). */
  dispatcher: Dispatcher;
  metrics?: RefreshMetrics;
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

type RefreshJob = Job<FeedRefreshPayload, RefreshResult>;

/** One run of a refresh job: what its steps share. */
interface Run {
  deps: RefreshDeps;
  job: RefreshJob;
  turn: DomainTurn;
  report: RefreshReport;
  logger: Logger;
}

export function createRefreshProcessor(deps: RefreshDeps) {
  return (job: RefreshJob, ctx: { logger: Logger }): Promise<RefreshResult> =>
    refreshFeed({ deps, job, turn: new DomainTurn(job, deps.gate, deps.scheduler), report: new RefreshReport(job, deps.metrics), logger: ctx.logger });
}

async function refreshFeed(run: Run): Promise<RefreshResult> {
  // 1. Take the domain's turn, reading the feed alongside (not yet: the job is delayed until it comes).
  const found = await takeTurnAndFind(run);
  if (found.kind !== 'found') return settle(run, decideRefresh(found));
  // 2. The feed and its lock (deleted, or held by another job: done); a turn not used goes back.
  const claimed = await claimFeed(run, found.feed);
  if (claimed.kind !== 'claimed') return settle(run, decideRefresh(claimed));
  try {
    // 3. Fetch in the turn, parse, store and record, under the time limit.
    const happened = await fetchParseStore(run, claimed.feed);
    // 4. Carry out what that means: schedule the next refresh, retry, or fail for good.
    return await settle(run, decideRefresh(happened), claimed.feed);
  } finally {
    // 5. The lock goes back whatever happened.
    await run.deps.lock.release(claimed.feed.id, run.job.id!).catch(() => undefined);
  }
}

/**
 * Step 1. When the domain travels with the job the feed row is read alongside (a waiting job
 * wakes at its turn); else the row comes first, for its domain. A URL that is not one has no
 * domain and takes no turn: it fails as invalid_url in step 3.
 */
async function takeTurnAndFind({ deps, job, turn }: Run): Promise<{ kind: 'found'; feed: Feed | null } | RefreshHappening> {
  const { feedId, domain } = job.data;
  if (domain) {
    const [feed, waitMs] = await Promise.all([deps.feeds.find(feedId), turn.take(domain)]);
    return waitMs > 0 ? { kind: 'turn_not_yet', domain, waitMs } : { kind: 'found', feed };
  }
  const feed = await deps.feeds.find(feedId);
  if (!feed) return { kind: 'feed_deleted' };
  const feedDomain = domainOf(feed.url);
  const waitMs = feedDomain ? await turn.take(feedDomain) : 0;
  return feedDomain && waitMs > 0 ? { kind: 'turn_not_yet', domain: feedDomain, waitMs } : { kind: 'found', feed };
}

/**
 * Step 2. A job that carried a domain not its feed's (URLs do not change: a job made by hand?)
 * trades that turn for the feed's domain's. Whatever fails here gives the turn back and the
 * lock up before it is thrown.
 */
async function claimFeed({ deps, job, turn }: Run, feed: Feed | null): Promise<{ kind: 'claimed'; feed: Feed } | RefreshHappening> {
  const { lock } = deps;
  const { feedId } = job.data;
  try {
    if (!feed) {
      await turn.giveBack();
      return { kind: 'feed_deleted' };
    }
    const taken = await lock.acquire(feedId, job.id!);
    if (!taken.acquired) {
      await turn.giveBack();
      return { kind: 'locked', holder: taken.holder };
    }
    const domain = domainOf(feed.url);
    if (domain !== turn.domain) {
      await turn.giveBack();
      const waitMs = domain ? await turn.take(domain) : 0;
      if (domain && waitMs > 0) {
        await lock.release(feedId, job.id!).catch(() => undefined);
        return { kind: 'turn_not_yet', domain, waitMs };
      }
    }
    return { kind: 'claimed', feed };
  } catch (err) {
    await turn.giveBack().catch(() => undefined);
    await lock.release(feedId, job.id!).catch(() => undefined);
    throw err;
  }
}

/** Step 3: fetch in the turn, parse, store and record, under the time limit; what happened. */
async function fetchParseStore(run: Run, feed: Feed): Promise<RefreshHappening> {
  const { job, deps } = run;
  try {
    return await withTimeLimit(deps.settings.timeLimitSeconds, async (signal) => store(run, feed, await fetchInTurn(run, feed, signal)));
  } catch (error) {
    return { kind: 'failed', error, attempt: job.attemptsMade + 1, attempts: job.opts.attempts ?? 1 };
  }
}

/** The conditional GET in the domain's turn, which ends with the exchange (a failure's Retry-After pushes the next one back). */
async function fetchInTurn({ deps, turn }: Run, feed: Feed, signal: AbortSignal): Promise<FetchFeedResult> {
  const { settings } = deps;
  if (!turn.domain) throw new FeedRefreshError('invalid_url', `not a URL: ${feed.url.slice(0, 200)}`);
  let retryAfterMs = 0;
  try {
    return await fetchFeed(feed.url, {
      userAgent: settings.userAgent,
      timeoutMs: settings.fetchTimeoutMs,
      maxBytes: settings.maxBytes,
      maxRedirects: settings.maxRedirects,
      maxRetryAfterMs: settings.maxBackoffMinutes * 60_000,
      etag: feed.etag,
      lastModified: feed.lastModified,
      signal,
      dispatcher: deps.dispatcher,
      // `next` is the URL's host name, as domainOf gives it.
      beforeHostChange: (_from, next) => turn.moveTo(next, signal),
    });
  } catch (err) {
    if (err instanceof FeedRefreshError) retryAfterMs = err.details.retryAfterMs ?? 0;
    throw err;
  } finally {
    await turn.end(retryAfterMs);
  }
}

/** A 304 is recorded as such; a document is parsed, its first items stored and the refresh recorded. */
async function store({ deps, report }: Run, feed: Feed, fetched: FetchFeedResult): Promise<RefreshHappening> {
  const { settings, feeds } = deps;
  const now = new Date();
  const next = nextAfterSuccess(now, feed.refreshIntervalMinutes);
  if (fetched.kind === 'not_modified') {
    await feeds.recordNotModified(feed, now, next);
    await report.step(
      { step: 'not_modified', httpStatus: 304, notModified: true, nextRefreshAt: next.toISOString() },
      `304 not modified; next refresh at ${next.toISOString()}`,
    );
    return { kind: 'stored', outcome: { outcome: 'not_modified', httpStatus: 304, nextRefreshAt: next.toISOString() }, next };
  }
  await report.step(
    { step: 'fetched', httpStatus: fetched.status, bytes: fetched.body.byteLength, notModified: false },
    `answered ${fetched.status}, ${fetched.body.byteLength} bytes`,
  );
  // A document may list any number of items: only the first ones are read and stored (more
  // than a feed keeps would be deleted by the feeds-trim-articles maintenance task again).
  const parsed = parseFeedDocument(fetched.body, fetched.contentType, fetched.finalUrl, {
    contentLocation: fetched.contentLocation,
    maxArticles: Math.min(settings.maxItemsPerDocument, settings.articlesKeepPerFeed),
  });
  const counts = await deps.articles.upsert(feed, parsed.articles);
  const items = parsed.articles.length + parsed.unread;
  await feeds.recordSuccess(feed, {
    fetchedAt: now,
    nextRefreshAt: next,
    etag: fetched.etag,
    lastModified: fetched.lastModified,
    title: parsed.title,
    siteUrl: parsed.siteUrl,
    inserted: counts.inserted,
  });
  report.stored(counts.inserted + counts.updated);
  await report.step(
    { step: 'stored', items, inserted: counts.inserted, updated: counts.updated, nextRefreshAt: next.toISOString() },
    `${parsed.format}: ${items} items, ${counts.inserted} new, ${counts.updated} updated, ${counts.unchanged} unchanged${parsed.skipped ? `, ${parsed.skipped} skipped` : ''}; next refresh at ${next.toISOString()}`,
  );
  const outcome = {
    outcome: 'refreshed' as const,
    httpStatus: fetched.status,
    format: parsed.format,
    encoding: parsed.encoding,
    items,
    ...counts,
    skippedItems: parsed.skipped,
    truncatedItems: parsed.unread,
    bytes: fetched.body.byteLength,
    nextRefreshAt: next.toISOString(),
  };
  return { kind: 'stored', outcome, next };
}

/**
 * Step 4: carries out a decision: the job's result, or the error it ends with. `feed`: the
 * claimed feed, given once the refresh got as far as step 3 (only then is a next one scheduled).
 */
async function settle(run: Run, decision: RefreshDecision, feed?: Feed): Promise<RefreshResult> {
  switch (decision.kind) {
    case 'delay':
    case 'outage':
      throw decision.error;
    case 'skip':
      return run.report.result(decision.outcome);
    case 'done':
      await scheduleNext(run, feed!, decision.next);
      return run.report.result(decision.outcome);
    case 'retry':
      await recordRetry(run, feed!, decision);
      throw decision.error;
    case 'fail':
      return failForGood(run, feed!, decision);
  }
}

/** Releases the lock, then asks for the feed's next periodic refresh (see the header for why in this order). */
async function scheduleNext({ deps, job }: Run, feed: Feed, next: Date): Promise<void> {
  await deps.lock.release(feed.id, job.id!);
  await deps.scheduler.schedulePeriodic(feed.id, delayUntil(next, new Date()), { reschedule: true, domain: domainOf(feed.url) });
}

/** The feed says it is retrying, and why, while it waits (best effort: the retry happens either way). */
async function recordRetry({ deps, report, logger }: Run, feed: Feed, decision: Extract<RefreshDecision, { kind: 'retry' }>): Promise<void> {
  const feedId = feed.id;
  const { failure, summary, attempt } = decision;
  if (failure?.detail) logger.debug({ feedId, failure: failure.failure, detail: failure.detail, attempt }, 'feed refresh attempt failed');
  await report.step({ step: 'failed', error: summary }, `attempt ${attempt} failed: ${summary}; retried`);
  await deps.feeds.recordRetry(feedId, summary).catch((e) => {
    if (!isFeedGone(e)) logger.debug({ feedId, err: toError(e).message }, 'could not record the retry on the feed');
  });
}

/**
 * The final failure, the feed's or ours: recorded on the feed with its next refresh (backing
 * off). Recording and scheduling need the database and Redis: should one be down, what they
 * throw is an outage, and the job waits for it (the worker factory) before deciding again.
 */
async function failForGood(run: Run, feed: Feed, decision: Extract<RefreshDecision, { kind: 'fail' }>): Promise<RefreshResult> {
  const { deps, report, logger } = run;
  const feedId = feed.id;
  const { failure, summary } = decision;
  if (!failure) logger.error({ feedId, err: toError(decision.error).message }, 'feed refresh failed on our side; recorded as internal_error');
  const failed = await recordFinalFailure(deps.feeds, feedId, summary, logger);
  if (!failed) return settle(run, decideRefresh({ kind: 'feed_deleted' }));
  const next = nextAfterFailure(new Date(), failed.refreshIntervalMinutes, failed.errorCount, deps.settings.maxBackoffMinutes, decision.retryAfterMs);
  await deps.feeds.setNextRefresh(feedId, next);
  report.failed(decision.label);
  if (failure)
    logger.info({ feedId, failure: failure.failure, detail: failure.detail, errorCount: failed.errorCount, nextRefreshAt: next }, 'feed refresh failed');
  await report.step(
    { step: 'failed', error: summary, nextRefreshAt: next.toISOString() },
    `failed for good: ${summary}; next refresh at ${next.toISOString()}`,
  );
  await scheduleNext(run, feed, next);
  throw decision.error;
}

/**
 * Records a refresh's final failure on the feed; null when the feed is gone. A reason the
 * database refuses (the store strips what PostgreSQL cannot hold, so this would be a bug) is
 * recorded as INTERNAL_ERROR instead: a feed never stays without its outcome and its next
 * refresh. An outage is thrown (the caller waits for it).
 */
async function recordFinalFailure(feeds: FeedStore, feedId: number, summary: string, logger: Logger): Promise<Feed | null> {
  try {
    return await feeds.recordFailure(feedId, summary);
  } catch (err) {
    if (isFeedGone(err)) return null;
    if (summary === INTERNAL_ERROR || dependencyDown(err)) throw err;
    logger.error({ feedId, err: toError(err).message }, 'recording the failure was refused; recorded as internal_error');
    return recordFinalFailure(feeds, feedId, INTERNAL_ERROR, logger);
  }
}
