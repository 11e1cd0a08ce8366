/**
 * isDatabaseUnavailable on the errors the platform really gets, from pg and from Prisma over
 * adapter-pg: a database that refuses connections (a closed port on loopback), a connection the
 * server ends mid-query (pg_terminate_backend: 57P01), a query past the client-side query timeout,
 * a pool used after its end; and not on a refused statement. The pools, the messages and the HTTP error mapping each had their own check
 * before, and each missed some of these (Prisma's raw queries, P2010, none of them).
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { isDatabaseUnavailable } from '../../src/db/database-unavailable.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('isDatabaseUnavailable on real errors', () => {
  let testDb: TestDatabase;
  let db: Database;
  let admin: pg.Client;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = createDatabase({ url: testDb.url, poolSize: 2 });
    admin = new pg.Client({ connectionString: testDb.url });
    await admin.connect();
  });
  afterAll(async () => {
    await db?.close();
    await admin?.end();
    await testDb?.drop();
  });

  it('recognises a database that refuses connections, through pg and through Prisma', async () => {
    const down = createDatabase({ url: `postgresql://postgres@127.0.0.1:${await closedPort()}/none`, poolSize: 1 });
    try {
      const errors = [
        await failureOf(() => down.pool.query('SELECT 1')),
        await failureOf(() => down.prisma.user.findFirst()),
        await failureOf(() => down.prisma.$queryRaw`SELECT 1`),
        await failureOf(() => down.prisma.$transaction(async (tx) => tx.user.findFirst())),
      ];
      expect(errors.map((e) => isDatabaseUnavailable(e))).toEqual([true, true, true, true]);
    } finally {
      await down.close();
    }
  });

  it('recognises a connection the server ends during a query, through pg and through Prisma', async () => {
    const ended: number[] = [];
    /** Ends the backend running the sleeping query (not one ended before, which may still be listed while it exits). */
    const terminateSleeper = async () => {
      for (let i = 0; i < 250; i++) {
        const { rows } = await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid() AND NOT (pid = ANY($1::int[]))",
          [ended],
        );
        if (rows.length) {
          ended.push(rows[0]!.pid);
          await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the sleeping query never showed up');
    };
    const viaPg = failureOf(() => db.pool.query('SELECT pg_sleep(30)'));
    await terminateSleeper();
    expect(isDatabaseUnavailable(await viaPg)).toBe(true);
    const viaPrisma = failureOf(() => db.prisma.$queryRaw`SELECT pg_sleep(30)`);
    await terminateSleeper();
    expect(isDatabaseUnavailable(await viaPrisma)).toBe(true);
  });

  it('recognises a query left unanswered past the client-side query timeout (as on a frozen server), through pg and through Prisma, and the pool goes on', async () => {
    const slow = createDatabase({ url: testDb.url, poolSize: 1, queryTimeoutMs: 300 });
    try {
      const errors = [await failureOf(() => slow.pool.query('SELECT pg_sleep(3)')), await failureOf(() => slow.prisma.$queryRaw`SELECT pg_sleep(3)`)];
      expect(errors.map((e) => isDatabaseUnavailable(e))).toEqual([true, true]);
      // The connection of the query given up on was dropped, not reused behind it.
      expect((await slow.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await slow.close();
    }
  });

  it('recognises a pool used after its end', async () => {
    const ended = createDatabase({ url: testDb.url, poolSize: 1 });
    await ended.pool.end();
    expect(isDatabaseUnavailable(await failureOf(() => ended.pool.query('SELECT 1')))).toBe(true);
    await ended.close();
  });

  it('does not take a refused statement for an outage', async () => {
    await db.prisma.user.create({ data: { username: 'twice', passwordHash: 'x' } });
    const errors = [
      await failureOf(() => db.prisma.user.create({ data: { username: 'twice', passwordHash: 'x' } })),
      await failureOf(() => db.prisma.$queryRawUnsafe('SELECT FROM nowhere_at_all')),
      await failureOf(() => db.pool.query('SELEKT 1')),
    ];
    expect(errors.map((e) => isDatabaseUnavailable(e))).toEqual([false, false, false]);
  });
});
