/**
 * What the HTTP layer asks of the pools: pop, import and the overview. Built once per API
 * process (wirePoolsApi in wiring.ts); the pop path is PoolPopper, the rest is a thin layer over the lists and rows.
 */
import type { Revocation } from '../revocation/revocation.js';
import type { PoolDeps } from './wiring.js';
import { POOL_TYPES, type PoolType, type ServedItem } from './pool-item.js';
import { PoolPopper } from './pop-items.js';
import { toError } from '../errors.js';

export interface PoolOverview {
  type: PoolType;
  groupId: number;
  /** Items in the Redis list; null when Redis cannot be reached. */
  poolLength: number | null;
  /** Popped rows not yet marked consumed in the DB; null when Redis cannot be reached. */
  pendingConsumed: number | null;
  /** Rows in the DB that may still be served (not pooled, not consumed). */
  available: number;
  /** Rows reserved for the pool (pooled, or popped and not yet marked). */
  reserved: number;
}

export class PoolService {
  private readonly deps: PoolDeps;
  private readonly popper: PoolPopper;

  constructor(deps: PoolDeps) {
    this.deps = deps;
    this.popper = new PoolPopper(deps);
  }

  get settings(): PoolDeps['settings'] {
    return this.deps.settings;
  }

  /** See PoolPopper.pop; `revocation` is the caller's logout blacklist check (src/revocation/revocation.ts). */
  pop(type: PoolType, groupId: number, count: number, revocation?: Revocation): Promise<ServedItem[]> {
    return this.popper.pop(type, groupId, count, revocation);
  }

  /** Inserts rows as available and asks for a refill of the pool. */
  async importItems(type: PoolType, groupId: number, items: { text: string; batchId: number }[]): Promise<number> {
    const inserted = await this.deps.rows.insert(type, groupId, items);
    await this.deps.triggers.refill(type, groupId).catch((err) => {
      this.deps.logger.debug({ err: toError(err).message, type, groupId }, 'refill request after import not sent; the periodic check will catch up');
    });
    return inserted;
  }

  async overview(): Promise<PoolOverview[]> {
    const out: PoolOverview[] = [];
    for (const type of POOL_TYPES) {
      const groups = await this.deps.rows.groupStates(type, { countAvailable: true });
      const lengths = await this.deps.lists.lengths(groups.map((g) => ({ type, groupId: g.groupId }))).catch(() => undefined);
      groups.forEach((g, i) => {
        const l = lengths?.[i];
        out.push({
          type,
          groupId: g.groupId,
          poolLength: l?.length ?? null,
          pendingConsumed: l?.pendingConsumed ?? null,
          available: g.available,
          reserved: g.reserved,
        });
      });
    }
    return out;
  }
}
