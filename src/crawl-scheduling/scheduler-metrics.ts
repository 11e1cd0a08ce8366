/**
 * The crawl scheduler's metrics: counters of its moves (registered by the pipeline role at start,
 * so every pipeline process exports them) and the gauges read at scrape time.
 */
import type { Metrics } from '../metrics/metrics.js';
import type { CrawlScheduler } from './crawl-scheduler.js';
import type { IpStore } from './ip-store.js';

export function schedulerMetrics(metrics: Metrics) {
  return {
    heldBack: metrics.counter('wp_scheduler_held_back_total', 'Due crawls pushed back by backpressure.'),
    rounds: metrics.counter('wp_scheduler_backpressure_rounds_total', 'Backpressure rounds run by the crawl-scheduler leader, by outcome (ok, failed).', [
      'outcome',
    ]),
    roundSeconds: metrics.histogram(
      'wp_scheduler_backpressure_round_seconds',
      'Duration of a backpressure round.',
      [],
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    ),
    reconciled: metrics.counter('wp_scheduler_reconciled_total', 'Changes made by reconciliation, by action.', ['action']),
    finalFailures: metrics.counter(
      'wp_scheduler_final_failures_total',
      'Crawl tasks that ended without a result (queue crawl: the crawl failed for good; crawl-result: its processing did); their IP was rescheduled.',
      ['queue'],
    ),
  };
}

/** A reading of the IPs' crawl health younger than this is exported again rather than queried again. */
export const IP_HEALTH_MAX_AGE_MS = 10_000;

/**
 * The gauges read at scrape time: IPs with a crawl chain (every pipeline process), and the active
 * and overdue IPs (what the IpCrawlOverdue and ScheduledIpsBelowActive alerts watch, as max over
 * the fleet). The crawl health is an aggregate over the whole ips table, so only the leader of the
 * `crawl-scheduler` task exports it, at most once per IP_HEALTH_MAX_AGE_MS; the other processes
 * export the families without series (as the fleet metrics do, src/runtime/fleet-metrics.ts).
 */
export function exportSchedulingGauges(
  metrics: Metrics,
  scheduler: CrawlScheduler,
  ips: Pick<IpStore, 'crawlHealth'>,
  leads: () => boolean,
  now: () => number = Date.now,
): void {
  const scheduled = metrics.gauge('wp_scheduler_scheduled_ips', 'IPs with a crawl chain (pending, running or in the pipeline).');
  metrics.onScrape(async () => scheduled.set(await scheduler.chain.size()));
  const activeIps = metrics.gauge('wp_ips_active', 'Active IPs (crawled on their interval; exported by the crawl-scheduler leader).');
  const overdueIps = metrics.gauge(
    'wp_ips_crawl_overdue',
    'Active IPs not crawled for more than twice their interval (never crawled: since created; exported by the crawl-scheduler leader).',
  );
  let last: { at: number; reading: Promise<{ active: number; overdue: number }> } | undefined;
  metrics.onScrape(async () => {
    if (!leads()) {
      last = undefined;
      // No series (not 0): remove() on a gauge without labels drops its one sample.
      activeIps.remove();
      overdueIps.remove();
      return;
    }
    if (!last || now() - last.at >= IP_HEALTH_MAX_AGE_MS) {
      const reading = ips.crawlHealth();
      last = { at: now(), reading };
      // A failed reading is not kept: the next scrape queries again.
      reading.catch(() => {
        if (last?.reading === reading) last = undefined;
      });
    }
    const health = await last.reading;
    activeIps.set(health.active);
    overdueIps.set(health.overdue);
  });
}
