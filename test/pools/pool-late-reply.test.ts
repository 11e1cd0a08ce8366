/**
 * A pop whose reply comes after REDIS_COMMAND_TIMEOUT_MS (Redis slow, or the API's event loop
 * stalled): the request is answered from the DB, and the rows the pop took are put back at the
 * head of the pool and served next, so every row is still served exactly once.
 *
 * Redis is held with CLIENT PAUSE WRITE (the pop script is a write; reads such as the token check
 * go on), which delays the pop past its deadline exactly. The second case also stops the API
 * process (SIGSTOP) before the pop runs, so its reply waits unread while the pools process marks
 * the rows consumed and removes them from the consumed list: the put-back must not depend on them
 * still being there.
 *
 * Each Redis runs with `appendfsync no`: with `everysec` the pop script's AOF guard refuses a pop
 * that runs while a background fsync does (aof-guard.ts), and a pop refused after its deadline
 * takes nothing, so there would be nothing to put back (a refusal seen in a loaded CI run). The
 * guard is tested in pool-redis-killed.test.ts; here the pop must run when Redis goes on.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeItem } from '../../src/pools/pool-item.js';
import { createKeys } from '../../src/redis/keys.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_ADMIN, testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { duplicates, importBatches, inServingOrder, metricValue, poolOverview, popMany, popOne, popUntilDrained, type Served } from './pool-helpers.js';

const ENV = {
  REDIS_COMMAND_TIMEOUT_MS: '300',
  POOL_SIZE: '40',
  POOL_REFILL_THRESHOLD: '10',
  POOL_REFILL_BATCH: '20',
  POOL_CHECK_INTERVAL_MS: '200',
  POOL_TRIGGER_INTERVAL_MS: '20',
};
const keys = createKeys('wp');

/** No background fsync, so that the AOF guard lets the paused pop run once Redis goes on (see above). */
const noBackgroundFsync = (admin: Redis) => admin.call('CONFIG', 'SET', 'appendfsync', 'no');

/** One pop of a titles pool while Redis holds its writes (CLIENT PAUSE WRITE): it misses its deadline, and runs once Redis goes on. */
async function popWhilePaused(admin: Redis, api: ApiClient, groupId: number) {
  await admin.call('CLIENT', 'PAUSE', '30000', 'WRITE');
  try {
    return await api.post(`/api/pools/titles/${groupId}/pop`);
  } finally {
    await admin.call('CLIENT', 'UNPAUSE');
  }
}

/** Late pops of titles whose outcome is known, by outcome (wp_pool_late_pops_total). */
const latePops = (api: ApiClient, outcome: string) => metricValue(api, 'wp_pool_late_pops_total', { type: 'titles', outcome });

/** The ids of the next `count` items of a pool, in the order a pop takes them. */
async function nextIds(redis: Redis, groupId: number, count: number): Promise<number[]> {
  return (await redis.lrange(keys.pool('titles', groupId), -count, -1)).map((raw) => decodeItem(raw).id).reverse();
}

async function expectAllConsumed(api: ApiClient, db: { query: (sql: string) => Promise<{ rows: any[] }> }, groupId: number, total: number) {
  await waitFor(
    async () => {
      const o = await poolOverview(api, 'titles', groupId);
      return o.available === 0 && o.reserved === 0 && o.pendingConsumed === 0 && o.poolLength === 0;
    },
    { timeoutMs: 30_000, message: 'consumed marks did not land' },
  );
  const { rows } = await db.query(`SELECT status, count(*)::int AS n FROM titles WHERE group_id = ${groupId} GROUP BY status`);
  expect(rows).toEqual([{ status: 'consumed', n: total }]);
}

describe('a pop whose reply comes after its deadline', () => {
  let t: TestPlatform;
  let admin: Redis;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api', 'pools'], env: ENV });
    admin = new Redis(t.redis.url);
    await noBackgroundFsync(admin);
  });
  afterAll(async () => {
    admin?.disconnect();
    await t?.stop();
  });

  it('is answered from the DB; the rows it took are put back, served next, each row once and in order', async () => {
    await importBatches(t.api, 'titles', 3, [
      { batchId: 1, count: 30 },
      { batchId: 2, count: 30 },
      { batchId: 3, count: 30 },
    ]);
    await waitFor(async () => (await poolOverview(t.api, 'titles', 3))?.poolLength === 40, { message: 'pool not prefilled' });
    const served: Served[] = [];
    for (let i = 0; i < 5; i++) served.push((await popOne(t.api, 'titles', 3))!);

    let putBack = 0;
    for (const count of [1, 4]) {
      const next = await nextIds(admin, 3, count);
      await admin.call('CLIENT', 'PAUSE', '30000', 'WRITE');
      let during: Served[];
      try {
        during = count === 1 ? [(await popOne(t.api, 'titles', 3))!] : await popMany(t.api, 'titles', 3, count);
      } finally {
        await admin.call('CLIENT', 'UNPAUSE');
      }
      // Past the deadline the request took rows from the DB; the pop itself ran once Redis went on.
      expect(during.map((s) => s.source)).toEqual(Array(count).fill('db'));
      served.push(...during);
      putBack += count;
      await waitFor(async () => (await latePops(t.api, 'put_back')) === (count === 1 ? 1 : 2), { message: 'late rows not put back' });
      expect(await metricValue(t.api, 'wp_pool_put_back_rows_total', { type: 'titles' })).toBe(putBack);
      expect(await nextIds(admin, 3, count)).toEqual(next);
      const again = count === 1 ? [(await popOne(t.api, 'titles', 3))!] : await popMany(t.api, 'titles', 3, count);
      expect(again).toEqual(next.map((id) => expect.objectContaining({ id, source: 'pool' })));
      served.push(...again);
    }
    served.push(...(await popUntilDrained(t.api, 'titles', 3, 7)));

    expect(duplicates(served.map((s) => s.id))).toEqual([]);
    expect(served.length).toBe(90);
    expect(inServingOrder(served.filter((s) => s.source === 'pool'))).toBe(true);
    expect(await metricValue(t.api, 'wp_pool_rows_in_doubt_total')).toBe(0);
    await expectAllConsumed(t.api, t.platform.ctx.db.pool, 3, 90);
  });

  it('with every row in the pool and none left in the DB, is answered 503, not pool_empty; its row is served next', async () => {
    await importBatches(t.api, 'titles', 5, [{ batchId: 1, count: 20 }]);
    await waitFor(async () => (await poolOverview(t.api, 'titles', 5))?.poolLength === 20, { message: 'pool not prefilled' });
    const next = await nextIds(admin, 5, 1);
    const putBefore = await metricValue(t.api, 'wp_pool_put_back_rows_total', { type: 'titles' });
    const lateBefore = await latePops(t.api, 'put_back');
    const late = await popWhilePaused(admin, t.api, 5);
    expect(late.status, JSON.stringify(late.body)).toBe(503);
    expect(late.body.error.code).toBe('redis_unavailable');
    await waitFor(async () => (await latePops(t.api, 'put_back')) === lateBefore + 1, { message: 'late row not put back' });
    expect(await metricValue(t.api, 'wp_pool_put_back_rows_total', { type: 'titles' })).toBe(putBefore + 1);
    const served = await popUntilDrained(t.api, 'titles', 5, 5);
    expect(served.map((s) => s.id)[0]).toBe(next[0]);
    expect(duplicates(served.map((s) => s.id))).toEqual([]);
    expect(served.length).toBe(20);

    // A late pop of the drained pool took nothing: nothing to put back, and its outcome says so.
    const nothingBefore = await latePops(t.api, 'nothing');
    const empty = await popWhilePaused(admin, t.api, 5);
    expect(empty.status, JSON.stringify(empty.body)).toBe(503);
    await waitFor(async () => (await latePops(t.api, 'nothing')) === nothingBefore + 1, { message: 'the late pop of an empty pool was not counted' });
    expect(await metricValue(t.api, 'wp_pool_put_back_rows_total', { type: 'titles' })).toBe(putBefore + 1);
    expect(await metricValue(t.api, 'wp_pool_rows_in_doubt_total')).toBe(0);
  });
});

describe('a late reply read only after the marking job marked its rows (API process stopped)', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let api: PlatformProcess | undefined;
  let pools: TestPlatform | undefined;
  let admin: Redis | undefined;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
  });
  afterAll(async () => {
    api?.signal('SIGCONT');
    await api?.stop();
    await pools?.stop();
    admin?.disconnect();
    await redis?.destroy();
    await db?.drop();
  });

  it('still puts them back: they are served once, right after', { timeout: 120_000 }, async () => {
    api = await spawnPlatform('api', testEnv(redis, db, { ...ENV, HTTP_ACCESS_LOG: 'false' }));
    const client = new ApiClient(api.apiUrl!);
    await client.login(TEST_ADMIN.username, TEST_ADMIN.password);
    admin = new Redis(redis.url);
    await noBackgroundFsync(admin);
    await importBatches(client, 'titles', 4, [
      { batchId: 1, count: 30 },
      { batchId: 2, count: 30 },
    ]);
    pools = await startTestPlatform({ roles: ['pools'], redis, db, env: ENV });
    await waitFor(async () => (await poolOverview(client, 'titles', 4))?.poolLength === 40, { message: 'pool not prefilled' });
    const served: Served[] = await popMany(client, 'titles', 4, 2);

    const next = await nextIds(admin, 4, 3);
    await admin.call('CLIENT', 'PAUSE', '30000', 'WRITE');
    const during = await popMany(client, 'titles', 4, 3).catch(async (err) => {
      await admin!.call('CLIENT', 'UNPAUSE');
      throw err;
    });
    expect(during.map((s) => s.source)).toEqual(['db', 'db', 'db']);
    served.push(...during);

    api.signal('SIGSTOP');
    try {
      await admin.call('CLIENT', 'UNPAUSE');
      // The pop runs now; its reply waits unread in the stopped process. The pools process marks
      // the rows consumed and removes them from the consumed list meanwhile.
      await waitFor(
        async () => {
          const { rows } = await pools!.platform.ctx.db.pool.query(
            `SELECT count(*)::int AS n FROM titles WHERE id = ANY($1::bigint[]) AND status = 'consumed'`,
            [next],
          );
          return rows[0].n === 3 && (await admin!.llen(keys.poolConsumed('titles', 4))) === 0;
        },
        { timeoutMs: 30_000, message: 'the popped rows were not marked' },
      );
      expect(await nextIds(admin, 4, 3)).not.toEqual(next);
    } finally {
      api.signal('SIGCONT');
    }

    await waitFor(async () => (await latePops(client, 'put_back')) === 1, { message: 'late rows not put back' });
    expect(await metricValue(client, 'wp_pool_put_back_rows_total', { type: 'titles' })).toBe(3);
    const again = await popMany(client, 'titles', 4, 3);
    expect(again).toEqual(next.map((id) => expect.objectContaining({ id, source: 'pool' })));
    served.push(...again);
    served.push(...(await popUntilDrained(client, 'titles', 4, 7)));

    expect(duplicates(served.map((s) => s.id))).toEqual([]);
    expect(served.length).toBe(60);
    expect(inServingOrder(served.filter((s) => s.source === 'pool'))).toBe(true);
    expect(await metricValue(client, 'wp_pool_rows_in_doubt_total')).toBe(0);
    await expectAllConsumed(client, pools.platform.ctx.db.pool, 4, 60);
  });
});
