/**
 * Gives every feed back its one periodic chain when Redis lost it (data loss, a job that died
 * of too many stalls, a manual deletion in Bull Board). Run by the leader as the `feeds-reconcile`
 * maintenance task (maintenance-tasks.ts), at its start and every FEED_RECONCILE_INTERVAL_SECONDS.
 * It never adds a second chain: FeedScheduler.ensureChain creates a job only when the chain's
 * deduplication key is missing or names a finished job. `signal` (the leader's term ended) stops
 * it between feeds; the next run checks them all again.
 */
import type { Logger } from '../logging/logger.js';
import type { FeedScheduler } from './feed-scheduler.js';
import type { FeedStore } from './feed-store.js';
import { delayUntil, dueAt } from './next-refresh.js';

const PAGE = 500;

export async function reconcileChains(deps: {
  feeds: Pick<FeedStore, 'schedulesAfter'>;
  scheduler: FeedScheduler;
  logger: Logger;
  signal?: AbortSignal;
}): Promise<{ checked: number; repaired: number }> {
  const started = performance.now();
  let cursor = 0;
  let checked = 0;
  let repaired = 0;
  while (!deps.signal?.aborted) {
    const feeds = await deps.feeds.schedulesAfter(cursor, PAGE);
    if (feeds.length === 0) break;
    for (const feed of feeds) {
      if (deps.signal?.aborted) break;
      const now = new Date();
      if (await deps.scheduler.ensureChain(feed.id, delayUntil(dueAt(feed, now), now))) repaired++;
    }
    checked += feeds.length;
    cursor = feeds[feeds.length - 1]!.id;
  }
  const ms = Math.round(performance.now() - started);
  if (repaired) deps.logger.warn({ checked, repaired, ms }, 'feed refresh chains repaired');
  else deps.logger.debug({ checked, ms }, 'feed refresh chains checked');
  return { checked, repaired };
}
