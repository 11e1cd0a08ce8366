/**
 * The pop path (runs in the API process): RPOP from the pool and, in the same script, LPUSH of
 * the popped items onto the consumed list (the durable record of what was served); when the pool is empty or Redis cannot be reached, claim rows from the DB in
 * one statement (`source: "db"`). A pool that drops below the threshold asks for a refill; pops
 * ask for the marking of their rows. See refill-pool.ts for why no row is served twice.
 */
import { DependencyDownError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { isDatabaseUnavailable } from './database-unavailable.js';
import type { PoolType, ServedItem } from './pool-item.js';
import type { PoolLists } from './pool-lists.js';
import type { PoolMetrics } from './pool-metrics.js';
import type { PoolRows } from './pool-rows.js';
import type { PoolTriggers } from './pool-triggers.js';

export interface PopDeps {
  lists: PoolLists;
  rows: PoolRows;
  triggers: PoolTriggers;
  settings: { refillThreshold: number };
  metrics: PoolMetrics;
  logger: Logger;
}

/** Least time between two "Redis unreachable" warnings of one process. */
const WARN_EVERY_MS = 10_000;

export class PoolPopper {
  private lastRedisWarning = 0;

  constructor(private readonly deps: PopDeps) {}

  /** Up to `count` rows, each served once; fewer (or none) when the pool and the table run out. */
  async pop(type: PoolType, groupId: number, count: number): Promise<ServedItem[]> {
    const { lists, rows, triggers, settings, metrics } = this.deps;
    const served: ServedItem[] = [];
    let belowThreshold = false;
    try {
      const { items, remaining } = await lists.pop(type, groupId, count);
      for (const item of items) served.push({ id: item.id, text: item.text, source: 'pool' });
      if (items.length) triggers.requestMarkConsumed(type, groupId);
      belowThreshold = remaining < settings.refillThreshold;
    } catch (err) {
      this.warnRedis(err);
    }
    const fromPool = served.length;
    if (fromPool < count) {
      try {
        const claimed = await rows.claim(type, groupId, count - fromPool);
        for (const row of claimed) served.push({ id: row.id, text: row.text, source: 'db' });
        // The table ran out too: a refill would find nothing (orphans are the periodic check's job).
        if (claimed.length < count - fromPool) belowThreshold = false;
      } catch (err) {
        // Items already popped are recorded as consumed: hand them out rather than lose them.
        if (!fromPool) {
          if (isDatabaseUnavailable(err)) throw new DependencyDownError('database', 'the pool is empty or unreachable and the database is unavailable', { cause: err });
          throw err;
        }
        this.deps.logger.warn({ err: (err as Error)?.message, type, groupId }, 'DB fallback failed; serving the pooled items only');
      }
    }
    if (belowThreshold) triggers.requestRefill(type, groupId);
    if (fromPool) metrics.served.inc({ type, source: 'pool' }, fromPool);
    if (served.length > fromPool) metrics.served.inc({ type, source: 'db' }, served.length - fromPool);
    return served;
  }

  private warnRedis(err: unknown): void {
    const now = Date.now();
    if (now - this.lastRedisWarning < WARN_EVERY_MS) return;
    this.lastRedisWarning = now;
    this.deps.logger.warn({ err: (err as Error)?.message }, 'pool pop failed in Redis; serving from the DB');
  }
}
