/**
 * Marks popped rows consumed in the DB: reads the oldest items of a pool's consumed list, marks
 * their ids in one UPDATE, and only then removes them from the list (only if they are still its
 * old end), so a popped row is always either in the list or consumed in the DB (the recovery in
 * refill-pool.ts relies on it). A crash between the two steps marks the same ids again: harmless.
 * Nothing removes entries from the middle of the list (a put-back of a late pop leaves its entries,
 * see pop-items.ts), so checking the oldest item before the trim is enough.
 * While the DB is down the items wait in Redis (at most what the pool held: refills need the DB
 * too); the job is delayed and retried until the DB is back.
 */
import { idOfEncoded, type PoolType } from './pool-item.js';
import type { PoolLists } from './pool-lists.js';
import type { PoolRows } from './pool-rows.js';

export interface MarkConsumedDeps {
  lists: PoolLists;
  rows: PoolRows;
  settings: { consumedBatch: number };
}

/** Batches per job; a longer backlog continues in a follow-up job. */
const MAX_BATCHES_PER_JOB = 200;

export async function markConsumed(deps: MarkConsumedDeps, type: PoolType, groupId: number): Promise<{ marked: number; more: boolean }> {
  const { lists, rows, settings } = deps;
  let marked = 0;
  for (let i = 0; i < MAX_BATCHES_PER_JOB; i++) {
    const items = await lists.peekConsumed(type, groupId, settings.consumedBatch);
    if (!items.length) return { marked, more: false };
    const ids = items.map(idOfEncoded).filter((id): id is number => id !== undefined);
    await rows.markConsumed(type, ids.map(String));
    await lists.trimConsumed(type, groupId, items);
    marked += ids.length;
  }
  return { marked, more: true };
}
