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

/** The gauges of the IPs' crawl chains and crawl health, read at scrape time. */
export function exportSchedulingGauges(metrics: Metrics, scheduler: CrawlScheduler, ips: Pick<IpStore, 'crawlHealth'>): void {
  const scheduled = metrics.gauge('wp_scheduler_scheduled_ips', 'IPs with a crawl chain (pending, running or in the pipeline).');
  metrics.onScrape(async () => scheduled.set(await scheduler.chain.size()));
  const activeIps = metrics.gauge('wp_ips_active', 'Active IPs (crawled on their interval).');
  const overdueIps = metrics.gauge('wp_ips_crawl_overdue', 'Active IPs not crawled for more than twice their interval (never crawled: since created).');
  metrics.onScrape(async () => {
    const health = await ips.crawlHealth();
    activeIps.set(health.active);
    overdueIps.set(health.overdue);
  });
}
