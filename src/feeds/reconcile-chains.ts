/**
 * Gives every feed back its one periodic chain when Redis lost it (data loss, a job that died
 * of too many stalls, a manual deletion in Bull Board). Run by the leader as the `feeds-reconcile`
 * maintenance task (maintenance-tasks.ts), at its start and every FEED_RECONCILE_INTERVAL_SECONDS.
 *
 * A page of feeds at a time: one reading of all their chains (FeedScheduler.chainStates, a few
 * round trips for the page), then one addBulk for the feeds that have no chain at all
 * (startChains) and ensureChain, one by one, for the rare chain whose key names a finished job.
 * Per-feed round trips made a check of a million feeds take minutes (bench:scale), longer than
 * its interval. It never adds a second chain: every job it adds carries its chain's
 * deduplication id, and ensureChain drops a dead key only by compare-and-delete. `signal` (the
 * leader's term ended) stops it between pages and repairs; the next run checks them all again.
 */
import type { Logger } from '../logging/logger.js';
import type { FeedScheduler } from './feed-scheduler.js';
import type { FeedStore } from './feed-store.js';
import { delayUntil, dueAt } from './next-refresh.js';

const PAGE = 500;

export async function reconcileChains(deps: {
  feeds: Pick<FeedStore, 'schedulesAfter'>;
  scheduler: Pick<FeedScheduler, 'chainStates' | 'startChains' | 'ensureChain'>;
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
    const states = await deps.scheduler.chainStates(feeds.map((f) => f.id));
    const now = new Date();
    const delayOf = (feed: (typeof feeds)[number]) => delayUntil(dueAt(feed, now), now);
    repaired += await deps.scheduler.startChains(feeds.filter((f) => states.get(f.id) === 'none').map((f) => ({ feedId: f.id, delayMs: delayOf(f) })));
    for (const feed of feeds) {
      if (deps.signal?.aborted) break;
      if (states.get(feed.id) === 'dead' && (await deps.scheduler.ensureChain(feed.id, delayOf(feed)))) repaired++;
    }
    checked += feeds.length;
    cursor = feeds[feeds.length - 1]!.id;
  }
  const ms = Math.round(performance.now() - started);
  if (repaired) deps.logger.warn({ checked, repaired, ms }, 'feed refresh chains repaired');
  else deps.logger.debug({ checked, ms }, 'feed refresh chains checked');
  return { checked, repaired };
}
