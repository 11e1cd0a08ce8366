/**
 * The transaction helper (src/db/transaction.ts), on PostgreSQL: what `work` wrote is committed,
 * or rolled back when it throws or when the outcome says so; the connection goes back to the
 * pool either way, and one whose rollback failed is destroyed instead.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('inTransaction', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  const rows = async () => (await pool.query<{ v: string }>('SELECT v FROM tx_probe ORDER BY v')).rows.map((r) => r.v);

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    await pool.query('CREATE TABLE tx_probe (v text PRIMARY KEY)');
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('commits what work wrote and returns its result', async () => {
    const result = await inTransaction(pool, async (client) => {
      await client.query("INSERT INTO tx_probe VALUES ('a'), ('b')");
      return 'done';
    });
    expect(result).toBe('done');
    expect(await rows()).toEqual(['a', 'b']);
  });

  it('rolls back when work throws, and when the outcome is not to be committed', async () => {
    await expect(
      inTransaction(pool, async (client) => {
        await client.query("INSERT INTO tx_probe VALUES ('c')");
        await client.query("INSERT INTO tx_probe VALUES ('a')"); // duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    const outcome = await inTransaction(
      pool,
      async (client) => {
        await client.query("INSERT INTO tx_probe VALUES ('d')");
        return { kind: 'duplicate' };
      },
      (o) => o.kind === 'persisted',
    );
    expect(outcome).toEqual({ kind: 'duplicate' });
    expect(await rows()).toEqual(['a', 'b']);
    // Every connection went back to the pool (max 2): three more transactions still get one.
    await Promise.all([1, 2, 3].map((i) => inTransaction(pool, (client) => client.query('SELECT $1::int', [i]))));
  });

  it('destroys a connection whose rollback failed instead of pooling it again', async () => {
    let pid = 0;
    await expect(
      inTransaction(pool, async (client) => {
        pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        // The server ends this connection under a running statement: the ROLLBACK after the error cannot be sent.
        const sleeping = client.query('SELECT pg_sleep(10)').then(
          () => new Error('the statement survived its connection'),
          (err: Error) => err,
        );
        await pool.query('SELECT pg_terminate_backend($1)', [pid]);
        throw await sleeping;
      }),
    ).rejects.toThrow(/terminat/);
    const pids = await Promise.all(
      [1, 2].map(() => inTransaction(pool, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)),
    );
    // Both connections of the pool answer: the dead one was not handed out again.
    expect(pids).not.toContain(pid);
  });
});
