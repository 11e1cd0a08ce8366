/**
 * The platform's one way to run a transaction on a pg connection of the pool (set-based
 * statements with array parameters, which the stores send straight to pg):
 * BEGIN → `work(client)` → COMMIT, or ROLLBACK when `work` throws or when `commit(result)` says
 * no (an outcome that must leave nothing behind) → the connection goes back to the pool.
 *
 * A connection whose ROLLBACK failed is in an unknown state: it is destroyed, not pooled again
 * (and its loss is not an unhandled 'error' event).
 * Nothing inside `work` may wait on another connection of the same pool (a pool exhausted by
 * transactions that each wait for a second connection would deadlock).
 *
 * Prisma's interactive transactions (prisma.$transaction) take their time limits from the
 * client's transactionOptions (client.ts) instead.
 */
import type pg from 'pg';

export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, commit: (result: T) => boolean = () => true): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection lost mid-transaction fails the statement in flight (or the next one); pg also
  // emits 'error' on the client, which the pool only listens to while the client is idle. Without
  // a listener that event would crash the process.
  const lost = () => undefined;
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query(commit(result) ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    // A broken client is discarded: it keeps the listener for the events still to come.
    if (!broken) client.off('error', lost);
    client.release(broken);
  }
}
