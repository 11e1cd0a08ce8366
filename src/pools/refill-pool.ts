/**
 * Refill of one pool (type, group) from the database, and the recovery of reserved rows that
 * are in no pool. The states of a row and who moves it:
 *
 *   available ──refill: reserve, then fenced push──▶ reserved ──pop + drain (mark-consumed.ts)──▶ consumed
 *   available ──DB fallback claim (one statement)─────────────────────────────────────────────▶ consumed
 *   reserved  ──recovery (here): reserved before t0 and in no list at the snapshot──▶ available
 *
 * Invariant (every row is served at most once): a row is served either by the DB fallback,
 * which takes only `available` rows and marks them `consumed` in the same statement, or by a
 * pop, which moves it from the pool list to the consumed list in the same Lua script. A
 * `reserved` row is therefore always in one of three places: the pool list (not served yet), the
 * consumed list (served, not yet marked; the drain marks it in the DB BEFORE it removes the
 * item), or nowhere because its push never happened or Redis lost it. A pop whose reply came
 * after its deadline served nobody; its items are RPUSHed back into the pool list while their
 * consumed entries stay (pop-items.ts), so such a row is in a list at every instant (or already
 * `consumed`, which recovery never touches) and is served once, by a later pop.
 *
 * Recovery releases only rows of that third kind. It runs under the refill lock:
 *   1. t0 = the DB clock, read BEFORE the lock is taken;
 *   2. take the lock (SET NX PX with a random token);
 *   3. snapshot = ids of the items in the pool list ∪ in the consumed list, read in one Lua script;
 *   4. UPDATE .. SET available WHERE reserved AND reserved_at < t0 AND id NOT IN snapshot.
 * Why no served or pooled row is released:
 *   - pops move an item from the pool list to the consumed list atomically, so the snapshot holds
 *     every id that is pooled or served-but-unmarked at that instant; a row served before it is
 *     already `consumed` in the DB (drain order), and the UPDATE re-checks `status` on the row;
 *   - pushes are fenced: the push script checks the lock token, so a refill that lost its lock
 *     (expired while it stalled) pushes nothing; every successful push of a row reserved before
 *     t0 happened while its refill held the lock, i.e. before this refill took it, i.e. before
 *     the snapshot;
 *   - a row reserved at or after t0 (by a later lock holder, when this refill stalls past its
 *     lock) is exempt, so a late UPDATE of a stalled refill cannot release a row someone pushed.
 * Limit (documented in docs/pools.md): if Redis LOSES DATA (FLUSHALL, a crash past the AOF fsync
 * window, a failover to a lagging replica), items that were in the consumed list but not yet
 * marked are lost with it; those rows look like rows lost from the pool and are released, so they
 * can be served once more. With the AOF intact (a restart, a graceful stop) nothing is lost; a kill of
 * the redis-server loses no pop it answered, since a pop is answered only once Redis has written it
 * to its AOF (aof-guard.ts: with appendfsync everysec Redis otherwise replies before it writes
 * while its background fsync runs, and a kill then puts served rows back in the pool). The backlog
 * at risk is normally drained within POOL_TRIGGER_INTERVAL_MS; it grows while the DB is down.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import type { PoolType } from './pool-item.js';
import type { PoolLists } from './pool-lists.js';
import type { PoolRows } from './pool-rows.js';

export interface RefillSettings {
  size: number;
  refillThreshold: number;
  refillBatch: number;
  refillLockSeconds: number;
}

export interface RefillDeps {
  lists: PoolLists;
  rows: PoolRows;
  settings: RefillSettings;
  logger: Logger;
}

export type RefillOutcome =
  | { status: 'full'; length: number }
  | { status: 'locked' }
  | { status: 'refilled'; length: number; pushed: number; released: number }
  | { status: 'lock-lost'; pushed: number; released: number };

/**
 * Refills the pool to `size` when it is below the threshold, after releasing orphaned reserved
 * rows. With `recover`, the release runs even when the pool is long enough.
 */
export async function refillPool(
  deps: RefillDeps,
  type: PoolType,
  groupId: number,
  options: { recover?: boolean; /** After each batch pushed (progress). */ onPushed?: (progress: { pushed: number; length: number }) => Promise<void> } = {},
): Promise<RefillOutcome> {
  const { lists, rows, settings, logger } = deps;
  const before = await lists.length(type, groupId);
  if (before >= settings.refillThreshold && !options.recover) return { status: 'full', length: before };

  const t0 = await rows.now();
  const token = randomUUID();
  const lockTtlMs = settings.refillLockSeconds * 1000;
  if (!(await lists.acquireLock(type, groupId, token, lockTtlMs))) return { status: 'locked' };
  try {
    const snapshot = await lists.snapshot(type, groupId);
    const released = await rows.releaseOrphans(type, groupId, snapshot.ids, t0);
    if (released) logger.warn({ type, groupId, released }, 'reserved rows in no pool were made available again');
    let length = snapshot.length;
    let pushed = 0;
    if (length >= settings.refillThreshold) return { status: 'refilled', length, pushed, released };
    // Reserve batch k+1 while batch k is pushed; pushes stay in order, so the pool stays FIFO.
    let room = settings.size - length;
    const reserveNext = () => {
      const wanted = Math.min(settings.refillBatch, room);
      const promise = rows.reserve(type, groupId, wanted);
      promise.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      return { wanted, promise };
    };
    let next: ReturnType<typeof reserveNext> | undefined = reserveNext();
    while (next) {
      const { wanted, promise } = next;
      const batch = await promise;
      next = undefined;
      if (!batch.length) break;
      room -= batch.length;
      if (batch.length === wanted && room > 0) next = reserveNext(); // else: the table ran out, or the pool is full
      const after = await lists.pushFenced(type, groupId, token, lockTtlMs, batch);
      if (after === undefined) {
        // The reserved batches are in no pool now; the next refill's recovery releases them.
        await next?.promise.catch(() => undefined);
        logger.warn({ type, groupId, rows: batch.length }, 'refill lost its lock; reserved rows left for recovery');
        return { status: 'lock-lost', pushed, released };
      }
      pushed += batch.length;
      length = after;
      await options.onPushed?.({ pushed, length });
    }
    return { status: 'refilled', length, pushed, released };
  } finally {
    await lists.releaseLock(type, groupId, token).catch(() => undefined);
  }
}
