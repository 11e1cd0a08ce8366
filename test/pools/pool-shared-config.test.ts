/**
 * The pools check follows the shared config the leader publishes (reference:
 * leader-election-config-sync.md): it looks at the pool groups the leader found, instead of
 * finding them in the database itself. One process with the cluster (leader), pools and api
 * roles; the leader publishes at start and then only every hour, every process checks the
 * version every 200 ms, the pools check runs every 200 ms.
 *
 * Rows written straight into the database (no import request, so nobody asks for a refill) for a
 * group the published config does not list yet stay out of its pool while the config stays as it
 * is; once the leader publishes again (run from Bull Board's scheduler view), the next check fills it.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('pools check on the shared config', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let sql: pg.Client;
  let t: TestPlatform;

  const insertRows = (groupId: number, count: number) =>
    sql.query(`INSERT INTO titles (group_id, batch_id, text) SELECT $1, 1, 'row-' || i FROM generate_series(1, $2::int) AS i`, [groupId, count]);
  const poolLength = (groupId: number) => t.platform.ctx.redis.llen(t.platform.ctx.keys.pool('titles', groupId));
  const config = async () => (await t.api.get('/api/cluster/config')).body;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    await insertRows(1, 30);
    t = await startTestPlatform({
      roles: ['cluster', 'pools', 'api'],
      redis,
      db,
      env: {
        CONFIG_REFRESH_INTERVAL_MS: '3600000',
        CONFIG_SYNC_INTERVAL_MS: '200',
        POOL_CHECK_INTERVAL_MS: '200',
        POOL_SIZE: '20',
        POOL_REFILL_THRESHOLD: '10',
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await sql?.end();
    await db?.drop();
    await redis?.destroy();
  });

  it('fills the pools of the groups the leader published, and a new group once it is published', async () => {
    await waitFor(async () => (await config()).source === 'shared', { message: 'the leader did not publish' });
    expect((await config()).content.poolGroups.titles).toEqual([1]);
    await waitFor(async () => (await poolLength(1)) === 20, { message: 'group 1 not filled' });

    await insertRows(2, 30);
    const version = (await config()).version;
    // Many checks later: group 2 is not in the published config, so no check looked at it.
    await sleep(2000);
    expect(await poolLength(2)).toBe(0);
    expect((await config()).version).toBe(version);

    // The operator has the leader publish now (Bull Board: run the job scheduler once).
    const run = await t.api.request('PUT', '/admin/queues/api/queues/maintenance/job-schedulers/shared-config-publish/run');
    expect(run.status).toBe(200);
    await waitFor(async () => (await config()).content.poolGroups.titles.includes(2), { message: 'group 2 not published' });
    await waitFor(async () => (await poolLength(2)) === 20, { message: 'group 2 not filled after its publication' });
  });
});
