import { int, num, setting } from './define.js';

/** Crawl scheduling and the result pipeline (reference: marketplace-crawler.md 2, 4, 5). */
export const pipelineSettings = {
  baseIntervalSeconds: setting('SCHEDULER_BASE_INTERVAL', int(1), 7200, 'Crawl interval at weight 1.0 (seconds).'),
  minIntervalSeconds: setting('SCHEDULER_MIN_INTERVAL', int(1), 3600, 'Shortest crawl interval (seconds).'),
  maxIntervalSeconds: setting('SCHEDULER_MAX_INTERVAL', int(1), 7200, 'Longest crawl interval (seconds).'),
  pagesOnSale: setting('SCHEDULER_PAGES_ON_SALE', int(0, 50), 5, 'On-sale result pages per crawl.'),
  pagesSold: setting('SCHEDULER_PAGES_SOLD', int(0, 50), 5, 'Sold result pages per crawl.'),
  batchSize: setting('SCHEDULER_BATCH_SIZE', int(1), 50, 'Crawls released per scheduling batch.'),
  backpressureThreshold: setting('SCHEDULER_BACKPRESSURE_THRESHOLD', int(1), 25, 'Most crawl jobs waiting at once; due crawls beyond it are held back.'),
  tickMs: setting('SCHEDULER_TICK_MS', int(50, 60000), 1000, "Period of the leader's backpressure loop; it looks two ticks ahead for due crawls."),
  reconcileIntervalSeconds: setting(
    'SCHEDULER_RECONCILE_INTERVAL',
    int(1),
    300,
    'How often the leader reconciles IPs in the DB with pending crawls (seconds; also at start).',
  ),
  spreadSeconds: setting(
    'SCHEDULER_SPREAD_SECONDS',
    int(0),
    60,
    'Window over which reconciliation spreads crawls that are due now (never crawled or overdue).',
  ),
  weightMin: setting('SCHEDULER_WEIGHT_MIN', num(0.01), 0.1, 'Lowest IP weight.'),
  weightMax: setting('SCHEDULER_WEIGHT_MAX', num(0.01), 10, 'Highest IP weight.'),
  weightDriftStep: setting('SCHEDULER_WEIGHT_DRIFT', num(0), 0.05, 'How far a weight moves towards 1.0 per crawl when neither speed-up nor slow-down applies.'),
  itemTtlOnSaleSeconds: setting('ANALYZER_ITEM_TTL_AVAILABLE', int(60), 86400, 'TTL of an on-sale item state hash.'),
  itemTtlSoldSeconds: setting('ANALYZER_ITEM_TTL_SOLD', int(60), 172800, 'TTL of a sold item state hash.'),
  stateBatchSize: setting('PIPELINE_STATE_BATCH_SIZE', int(1, 10000), 500, 'Items per Redis pipeline round trip in the state machine.'),
  concurrency: setting('PIPELINE_CONCURRENCY', int(1, 100), 4, 'Crawl results processed at once per pipeline process.'),
  processedRetentionDays: setting(
    'PIPELINE_PROCESSED_RETENTION_DAYS',
    int(1),
    14,
    'How long the task ids of processed results are kept to recognise re-deliveries (days).',
  ),
  cacheTtlSeconds: setting('CACHE_TTL_SECONDS', int(1), 600, 'TTL of the leaderboard and IP detail caches.'),
  alertOutflowSpikeFactor: setting(
    'ALERT_OUTFLOW_SPIKE_FACTOR',
    num(1),
    3,
    "Alert when an hour's outflow exceeds this many times the previous hours' average.",
  ),
  alertOutflowMin: setting('ALERT_OUTFLOW_MIN', int(0), 20, 'Outflow an hour must reach before a spike alert fires.'),
  alertBaselineHours: setting('ALERT_BASELINE_HOURS', int(1, 168), 24, 'Previous hours whose average outflow is the baseline of the spike rule.'),
  alertLiquidityLevel: setting('ALERT_LIQUIDITY_LEVEL', num(0), 0.8, "Alert when an hour's liquidity index (outflow / inflow) is above this."),
  alertLiquidityMinInflow: setting('ALERT_LIQUIDITY_MIN_INFLOW', int(0), 10, 'Inflow an hour must reach before the liquidity rule is evaluated.'),
};
