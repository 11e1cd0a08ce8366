/**
 * The periodic check (a job scheduler every POOL_CHECK_INTERVAL_MS, and once at start as the
 * prefill): for every (type, group) with rows, ask for a refill when the pool is below the
 * threshold and rows are available, for a recovery when the DB holds more reserved rows than
 * Redis accounts for (orphans after a crash or a Redis data loss), and for the marking of
 * consumed items still waiting in Redis.
 */
import { POOL_TYPES } from './pool-item.js';
import type { PoolLists } from './pool-lists.js';
import type { PoolRows } from './pool-rows.js';
import type { PoolTriggers } from './pool-triggers.js';

export interface CheckDeps {
  lists: PoolLists;
  rows: PoolRows;
  triggers: PoolTriggers;
  settings: { refillThreshold: number };
}

export interface CheckResult {
  pools: number;
  refills: number;
  recoveries: number;
  markings: number;
}

export async function checkPools(deps: CheckDeps): Promise<CheckResult> {
  const { lists, rows, triggers, settings } = deps;
  const result: CheckResult = { pools: 0, refills: 0, recoveries: 0, markings: 0 };
  for (const type of POOL_TYPES) {
    const groups = await rows.groupStates(type, { countAvailable: false });
    const lengths = await lists.lengths(groups.map((g) => ({ type, groupId: g.groupId })));
    const asks: Promise<void>[] = [];
    groups.forEach((g, i) => {
      const { length, pendingConsumed } = lengths[i]!;
      result.pools += 1;
      if (pendingConsumed > 0) {
        result.markings += 1;
        asks.push(triggers.markConsumed(type, g.groupId));
      }
      if (length < settings.refillThreshold && g.available > 0) {
        result.refills += 1;
        asks.push(triggers.refill(type, g.groupId));
      } else if (g.reserved > length + pendingConsumed) {
        result.recoveries += 1;
        asks.push(triggers.refill(type, g.groupId, { recover: true }));
      }
    });
    await Promise.all(asks);
  }
  return result;
}
