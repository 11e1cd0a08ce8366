import type { Metrics } from '../metrics/metrics.js';

/** The pools' Prometheus metrics (labels: pool type and, for served rows, the source). */
export function poolMetrics(metrics: Metrics) {
  return {
    served: metrics.counter('wp_pool_served_total', 'Rows served by pops, by pool type and source (pool, db).', ['type', 'source']),
    refilled: metrics.counter('wp_pool_refilled_rows_total', 'Rows reserved and pushed into pools, by pool type.', ['type']),
    released: metrics.counter('wp_pool_released_rows_total', 'Reserved rows found in no pool and made available again, by pool type.', ['type']),
    marked: metrics.counter('wp_pool_consumed_marked_total', 'Popped rows marked consumed in the DB, by pool type.', ['type']),
  };
}

export type PoolMetrics = ReturnType<typeof poolMetrics>;
