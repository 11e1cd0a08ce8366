import { int, setting } from './define.js';

/** Content pools (reference: content-pools.md). */
export const poolSettings = {
  size: setting('POOL_SIZE', int(1), 5000, 'Target length of each pool list.'),
  refillThreshold: setting('POOL_REFILL_THRESHOLD', int(0), 1000, 'Refill a pool when it is shorter than this.'),
  refillBatch: setting('POOL_REFILL_BATCH', int(1, 5000), 500, 'Rows reserved and pushed per refill statement.'),
  checkIntervalMs: setting('POOL_CHECK_INTERVAL_MS', int(100), 5000, 'Period of the pool length check (job scheduler).'),
  refillLockSeconds: setting('POOL_REFILL_LOCK_SECONDS', int(1), 60, 'Lock that keeps one refill per pool at a time.'),
  consumedBatch: setting('POOL_CONSUMED_BATCH', int(1, 20000), 1000, 'Consumed ids marked in the DB per statement.'),
  triggerIntervalMs: setting('POOL_TRIGGER_INTERVAL_MS', int(0), 100, 'Least time between two refill or marking jobs one API process asks for, per pool.'),
  maxImportItems: setting('POOL_MAX_IMPORT_ITEMS', int(1), 10000, 'Most items per import request.'),
  maxTextBytes: setting('POOL_MAX_TEXT_BYTES', int(1), 65536, 'Largest text of one pooled row.'),
};
