import type { Metrics } from '../metrics/metrics.js';

/** The pools' Prometheus metrics (labels: pool type and, for served rows, the source). */
export function poolMetrics(metrics: Metrics) {
  return {
    served: metrics.counter('wp_pool_served_total', 'Rows served by pops, by pool type and source (pool, db).', ['type', 'source']),
    refilled: metrics.counter('wp_pool_refilled_rows_total', 'Rows reserved and pushed into pools, by pool type.', ['type']),
    released: metrics.counter('wp_pool_released_rows_total', 'Reserved rows found in no pool and made available again, by pool type.', ['type']),
    marked: metrics.counter('wp_pool_consumed_marked_total', 'Popped rows marked consumed in the DB, by pool type.', ['type']),
    putBack: metrics.counter(
      'wp_pool_put_back_rows_total',
      'Rows of pops whose reply came after the deadline (the request was served from the DB), put back at the head of the pool, by pool type.',
      ['type'],
    ),
    latePops: metrics.counter(
      'wp_pool_late_pops_total',
      'Pops whose reply came after their deadline (the request was served from the DB, or answered 503), once their outcome is known, by pool type and outcome: put_back (the rows it took are back in the pool), nothing (it took no row: the pool was empty, or Redis refused it, e.g. its AOF guard once the deadline had passed), in_doubt (the connection dropped: see wp_pool_rows_in_doubt_total).',
      ['type', 'outcome'],
    ),
    inDoubt: metrics.counter(
      'wp_pool_rows_in_doubt_total',
      'Rows a pop may have taken from a pool without serving them (the connection to Redis dropped while the pop or its put-back was in flight; counted as many as it asked for), by pool type. Normally 0.',
      ['type'],
    ),
  };
}

export type PoolMetrics = ReturnType<typeof poolMetrics>;
