/**
 * The feeds' periodic tasks, run by the leader on the `maintenance` queue
 * (src/queues/maintenance-worker.ts):
 *
 *   feeds-reconcile          every feed gets back its one periodic chain if Redis lost it
 *                            (reconcile-chains.ts), every FEED_RECONCILE_INTERVAL_SECONDS (0: only
 *                            when a leader takes over) and whenever a leader takes over
 *   feeds-trim-articles      keeps the newest ARTICLES_KEEP_PER_FEED articles of each feed
 *                            (trim-articles.ts), every FEED_HOUSEKEEPING_INTERVAL_SECONDS
 *   feeds-sanitize-articles  cleans articles stored by an older sanitizer (sanitize-stored-articles.ts)
 *                            when a leader takes over; it stops when the term ends and the next
 *                            leader goes on where it stopped
 */
import type { PlatformContext } from '../context.js';
import type { MaintenanceTask } from '../queues/maintenance-task.js';
import { wireFeeds } from './wiring.js';
import { reconcileChains } from './reconcile-chains.js';
import { sanitizeStoredArticles } from './sanitize-stored-articles.js';
import { trimArticles } from './trim-articles.js';

export function feedMaintenanceTasks(ctx: Pick<PlatformContext, 'config' | 'db' | 'redis' | 'keys' | 'queues' | 'metrics'>): MaintenanceTask[] {
  const { scheduler, feeds, articles } = wireFeeds(ctx);
  const settings = ctx.config.feeds;
  const trimmed = ctx.metrics.counter(
    'wp_feed_articles_trimmed_total',
    'Articles deleted by the trim task (older than the newest ARTICLES_KEEP_PER_FEED of their feed).',
  );
  return [
    {
      name: 'feeds-reconcile',
      everyMs: settings.reconcileIntervalSeconds * 1000,
      runAtStart: true,
      run: async ({ job, signal, logger }) => {
        const report = await reconcileChains({ feeds, scheduler, logger, signal });
        await job.log(`${report.checked} feeds checked, ${report.repaired} chains repaired${signal.aborted ? '; stopped early: the leader term ended' : ''}`);
        return report;
      },
    },
    {
      name: 'feeds-trim-articles',
      everyMs: settings.housekeepingIntervalSeconds * 1000,
      run: async ({ job, logger }) => {
        const outcome = await trimArticles(articles, settings.articlesKeepPerFeed);
        trimmed.inc(outcome.deleted);
        if (outcome.deleted) logger.info(outcome, 'articles trimmed');
        await job.log(`${outcome.deleted} articles deleted past the newest ${settings.articlesKeepPerFeed} of each feed`);
        return outcome;
      },
    },
    {
      name: 'feeds-sanitize-articles',
      everyMs: 0,
      runAtStart: true,
      run: async ({ job, term, signal, logger }) => {
        const outcome = await sanitizeStoredArticles({
          articles,
          batchSize: settings.sanitizeBatchSize,
          shouldContinue: () => !signal.aborted && term.isCurrent(),
        });
        if (outcome.cleaned || !outcome.finished) logger.info(outcome, 'stored articles sanitized');
        await job.log(`${outcome.cleaned} articles cleaned${outcome.finished ? '' : '; stopped early: the leader term ended'}`);
        return outcome;
      },
    },
  ];
}
