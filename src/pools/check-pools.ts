/**
 * The periodic check (a job scheduler every POOL_CHECK_INTERVAL_MS, and once at start as the
 * prefill): for every (type, group) with rows, ask for a refill when the pool is below the
 * threshold and rows are available, for a recovery when the DB holds more reserved rows than
 * Redis accounts for (orphans after a crash or a Redis data loss), and for the marking of
 * consumed items still waiting in Redis.
 *
 * Which groups have rows comes from the shared config the leader publishes (`poolGroups`,
 * reference: leader-election-config-sync.md): the leader finds them once per
 * CONFIG_REFRESH_INTERVAL_MS with an index skip-scan of each table, and the check, in whatever
 * process runs it, reads them instead of scanning again. A new group reaches it within one
 * publication and one sync period; an import asks for its group's refill itself meanwhile.
 * Without a loaded config (none yet) the check finds the groups in the DB.
 */
import { POOL_TYPES, type PoolType } from './pool-item.js';
import type { PoolLists } from './pool-lists.js';
import type { PoolRows } from './pool-rows.js';
import type { PoolTriggers } from './pool-triggers.js';

export interface CheckDeps {
  lists: PoolLists;
  rows: PoolRows;
  triggers: PoolTriggers;
  settings: { refillThreshold: number };
  /** The group ids with rows of a type, from the shared config; undefined when none is loaded. */
  groups?: (type: PoolType) => readonly number[] | undefined;
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
    const known = deps.groups?.(type);
    const groups = known ? await rows.groupStatesOf(type, known) : await rows.groupStates(type, { countAvailable: false });
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
