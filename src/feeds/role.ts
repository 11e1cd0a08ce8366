/**
 * The feeds worker role: the `feed-refresh` worker, the `feed-housekeeping` worker with its job
 * scheduler (one per cluster, whichever process upserts it: trims articles past
 * ARTICLES_KEEP_PER_FEED), and (while this instance is leader) the reconciler that gives every
 * feed back its one periodic chain if Redis lost it, and the job that sanitizes articles stored
 * by an older sanitizer (once per term, at its start).
 *
 * Feed requests go out through one dispatcher holding the outbound policy (OUTBOUND_ALLOW).
 *
 * Stop order: the reconciler and the sanitizing job (it ends after its current batch), then the
 * workers (no new jobs; active refreshes finish within WORKER_SHUTDOWN_GRACE_MS or are handed back
 * as stalled; their lock is theirs to take again), then the dispatcher's idle connections.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { createOutboundDispatcher } from '../net/outbound-dispatcher.js';
import { OutboundPolicy } from '../net/outbound-policy.js';
import { createWorker } from '../queues/create-worker.js';
import { FEED_BACKOFF } from './feed-scheduler.js';
import { createFeedServices } from './feed-services.js';
import { reconcileChains } from './reconcile-chains.js';
import { sanitizeStoredArticles } from './sanitize-stored-articles.js';
import { createRefreshProcessor, FeedRetryError } from './refresh-feed.js';
import { trimArticles } from './trim-articles.js';

export const HOUSEKEEPING_SCHEDULER_ID = 'feed-housekeeping-trim-articles';

export async function startFeedsRole(ctx: PlatformContext): Promise<RoleHandle> {
  const settings = ctx.config.feeds;
  const logger = ctx.logger.child({ role: 'feeds' });
  const { store, lock, gate, scheduler } = createFeedServices(ctx);
  const metrics = {
    refreshes: ctx.metrics.counter('wp_feed_refreshes_total', 'Feed refreshes by outcome (refreshed, not_modified, skipped_*, failed_<class>).', ['outcome']),
    articles: ctx.metrics.counter('wp_feed_articles_upserted_total', 'Articles inserted or changed by feed refreshes.'),
  };

  const dispatcher = createOutboundDispatcher(OutboundPolicy.fromEntries(ctx.config.outbound.allow));
  const processor = createRefreshProcessor({ settings, store, lock, gate, scheduler, dispatcher, metrics });
  const worker = createWorker(ctx, 'feedRefresh', processor, {
    concurrency: settings.concurrency,
    bullmq: {
      // Shown as the job's processedBy (Bull Board, /api/queues/feed-refresh/jobs/:id).
      name: ctx.instanceId,
      // A refresh stalls only when its process dies; give the job a second chance before failing it.
      maxStalledCount: 2,
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string, err?: Error) => {
          if (type !== FEED_BACKOFF) return 0;
          const exponential = settings.retryDelayMs * 2 ** Math.max(0, attemptsMade - 1);
          const retryAfter = err instanceof FeedRetryError ? (err.retryAfterMs ?? 0) : 0;
          return Math.max(exponential, retryAfter);
        },
      },
    },
  });

  const trimmed = ctx.metrics.counter('wp_feed_articles_trimmed_total', 'Articles deleted by the housekeeping job (older than the newest ARTICLES_KEEP_PER_FEED of their feed).');
  await ctx.queues
    .queue('feedHousekeeping')
    .upsertJobScheduler(
      HOUSEKEEPING_SCHEDULER_ID,
      { every: settings.housekeepingIntervalSeconds * 1000 },
      { name: 'trim-articles', data: { task: 'trim-articles' }, opts: { removeOnComplete: { count: 100 }, removeOnFail: { age: 7 * 86400 } } },
    );
  const housekeeping = createWorker(ctx, 'feedHousekeeping', async () => {
    const outcome = await trimArticles(ctx.db, settings.articlesKeepPerFeed);
    trimmed.inc(outcome.deleted);
    if (outcome.deleted) logger.info(outcome, 'articles trimmed');
    return outcome;
  });

  let stopReconciler: (() => Promise<void>) | undefined;
  let stopped = false;
  ctx.leadership.whileLeader('feeds-reconcile', async () => {
    if (stopped) return async () => undefined;
    let running: Promise<void> = Promise.resolve();
    let busy = false;
    const run = () => {
      if (busy) return;
      busy = true;
      running = reconcileChains({ prisma: ctx.db.prisma, scheduler, logger }).then(
        () => undefined,
        (err: Error) => logger.warn({ err: err.message }, 'feed chain reconciliation failed; next round will retry'),
      ).finally(() => {
        busy = false;
      });
    };
    run();
    const timer = settings.reconcileIntervalSeconds > 0 ? setInterval(run, settings.reconcileIntervalSeconds * 1000) : undefined;
    timer?.unref();
    let stopping: Promise<void> | undefined;
    stopReconciler = () =>
      (stopping ??= (async () => {
        clearInterval(timer);
        await running;
      })());
    return stopReconciler;
  });

  let stopSanitizer: (() => Promise<void>) | undefined;
  ctx.leadership.whileLeader('feeds-sanitize-articles', async (term) => {
    let stop = stopped;
    const running = sanitizeStoredArticles({ pool: ctx.db.pool, batchSize: settings.sanitizeBatchSize, shouldContinue: () => !stop && term.isCurrent() })
      .then(
        ({ cleaned, finished }) => {
          if (cleaned || !finished) logger.info({ cleaned, finished }, 'stored articles sanitized');
        },
        (err: Error) => logger.warn({ err: err.message }, 'sanitizing stored articles failed; the next leader term retries'),
      );
    stopSanitizer = async () => {
      stop = true;
      await running;
    };
    return stopSanitizer;
  });

  let stopping: Promise<void> | undefined;
  return {
    name: 'feeds',
    queues: [worker.queueName, housekeeping.queueName],
    stop: () =>
      (stopping ??= (async () => {
        stopped = true;
        await stopReconciler?.();
        await stopSanitizer?.();
        await Promise.all([worker.close(), housekeeping.close()]);
        await dispatcher.close();
      })()),
  };
}
