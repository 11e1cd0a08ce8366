/**
 * Marks popped rows consumed in the DB: reads the oldest ids of a pool's consumed list, marks
 * them in one UPDATE, and only then removes them from the list (by value, from the old end), so
 * an id is always either in the list or consumed in the DB (the recovery in refill-pool.ts
 * relies on it). A crash between the two steps marks the same ids again: harmless. While the DB
 * is down the ids wait in Redis; the job is delayed and retried until the DB is back.
 */
import type { PoolType } from './pool-item.js';
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
    const ids = await lists.peekConsumed(type, groupId, settings.consumedBatch);
    if (!ids.length) return { marked, more: false };
    await rows.markConsumed(type, ids);
    await lists.trimConsumed(type, groupId, ids);
    marked += ids.length;
  }
  return { marked, more: true };
}
