/**
 * The feeds worker role: the `feed-refresh` worker. The reconciliation that gives every feed back
 * its one periodic chain if Redis lost it is a maintenance task (maintenance-tasks.ts).
 *
 * Feed requests go out through one dispatcher holding the outbound policy (OUTBOUND_ALLOW).
 *
 * Stop order: the worker (no new jobs; active refreshes finish within WORKER_SHUTDOWN_GRACE_MS
 * or are handed back as stalled; their lock is theirs to take again), then the dispatcher's idle
 * connections.
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { createOutboundDispatcher } from '../net/outbound-dispatcher.js';
import { OutboundPolicy } from '../net/outbound-policy.js';
import { createWorker } from '../queues/create-worker.js';
import { FEED_BACKOFF } from './feed-scheduler.js';
import { wireFeeds } from './wiring.js';
import { createRefreshProcessor, FeedRetryError } from './refresh-feed.js';

export async function startFeedsRole(ctx: PlatformContext): Promise<RoleHandle> {
  const settings = ctx.config.feeds;
  const { feeds, articles, lock, gate, scheduler } = wireFeeds(ctx);
  const metrics = {
    refreshes: ctx.metrics.counter('wp_feed_refreshes_total', 'Feed refreshes by outcome (refreshed, not_modified, skipped_*, failed_<class>).', ['outcome']),
    articles: ctx.metrics.counter('wp_feed_articles_upserted_total', 'Articles inserted or changed by feed refreshes.'),
  };

  const dispatcher = createOutboundDispatcher(OutboundPolicy.fromEntries(ctx.config.outbound.allow));
  const processor = createRefreshProcessor({ settings, feeds, articles, lock, gate, scheduler, dispatcher, metrics });
  const worker = createWorker(ctx, 'feedRefresh', processor, {
    concurrency: settings.concurrency,
    bullmq: {
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

  let stopping: Promise<void> | undefined;
  return {
    name: 'feeds',
    queues: worker.queueNames,
    stop: () =>
      (stopping ??= (async () => {
        await worker.close();
        await dispatcher.close();
      })()),
  };
}
