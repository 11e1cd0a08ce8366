/**
 * The hot routes (pool pop and pop-many, message append and read) check the logout blacklist in
 * their own Redis script instead of a separate round trip (src/revocation/revocation.ts). What a user
 * relies on is the same as on every other route:
 * - a logged-out token is refused with 401 token_revoked, and the refused request changed
 *   nothing: no row left the pool or the table, no message reached the cache, the persist
 *   buffer or the DB;
 * - with Redis down the platform fails secure: 503, and no fallback to the DB serves a row or
 *   stores a message for a token whose logout cannot be checked; once Redis is back, it works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/http-client.js';
import { TEST_ADMIN } from '../support/env.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { importBatch, poolOverview } from '../pools/pool-helpers.js';

const GROUP = 41;
const SESSION = 'revocation-session-1';

describe('logout blacklist on the pool and message routes', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api', 'pools', 'messages'],
      env: { POOL_SIZE: '20', POOL_REFILL_THRESHOLD: '5', POOL_REFILL_BATCH: '20', POOL_CHECK_INTERVAL_MS: '3600000' },
    });
    await importBatch(t.api, 'titles', GROUP, 1, 40);
    await waitFor(async () => (await poolOverview(t.api, 'titles', GROUP))?.poolLength === 20, { message: 'pool not filled after import' });
  });
  afterAll(() => t?.stop());

  /** What a refused request must leave untouched, read straight from Redis and the DB. */
  async function state() {
    const { redis, keys, db } = t.platform.ctx;
    const buffers = await Promise.all(Array.from({ length: t.platform.ctx.config.messages.persistShards }, (_, s) => redis.llen(keys.messagePersistBuffer(s))));
    const rows = await db.pool.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM titles WHERE group_id = $1 GROUP BY status ORDER BY status',
      [GROUP],
    );
    const stored = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM chat_messages WHERE session_id = $1', [SESSION]);
    return {
      pool: await redis.lrange(keys.pool('titles', GROUP), 0, -1),
      consumed: await redis.llen(keys.poolConsumed('titles', GROUP)),
      rows: rows.rows,
      cache: await redis.lrange(keys.sessionMessages(SESSION), 0, -1),
      buffered: buffers.reduce((a, b) => a + b, 0),
      stored: Number(stored.rows[0]!.n),
    };
  }

  it('refuses a logged-out token with 401 on pop, pop-many, append and read, and changes nothing', async () => {
    const user = new ApiClient(t.api.baseUrl);
    await user.login(TEST_ADMIN.username, TEST_ADMIN.password);
    // Accepted while logged in: the same routes work with the check inside their script.
    expect((await user.post(`/api/pools/titles/${GROUP}/pop`)).status).toBe(200);
    expect((await user.post(`/api/pools/titles/${GROUP}/pop-many`, { count: 2 })).body.items).toHaveLength(2);
    expect((await user.post(`/api/sessions/${SESSION}/messages`, { role: 'user', content: 'before logout' })).status).toBe(201);
    await waitFor(async () => (await state()).buffered === 0 && (await state()).consumed === 0, { message: 'persist and marking did not settle' });
    const read = await user.get(`/api/sessions/${SESSION}/messages?limit=10`);
    expect(read.status).toBe(200);
    expect(read.body.messages.map((m: { content: string }) => m.content)).toEqual(['before logout']);

    expect((await user.post('/api/auth/logout')).status).toBe(204);
    const before = await state();
    const refused = [
      await user.post(`/api/pools/titles/${GROUP}/pop`),
      await user.post(`/api/pools/titles/${GROUP}/pop-many`, { count: 5 }),
      await user.post(`/api/sessions/${SESSION}/messages`, { role: 'user', content: 'after logout' }),
      await user.get(`/api/sessions/${SESSION}/messages?limit=10`),
    ];
    for (const res of refused) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('token_revoked');
    }
    expect(await state()).toEqual(before);
    // Another session of the same user is not affected.
    expect((await t.api.post(`/api/pools/titles/${GROUP}/pop`)).status).toBe(200);
  });

  it('fails secure with Redis down: 503, nothing served from or stored in the DB; back to normal when Redis returns', async () => {
    // The marking of earlier pops settles first: it changes row states on its own.
    await waitFor(async () => (await state()).consumed === 0, { message: 'marking did not settle' });
    const { rows: rowsBefore, stored: storedBefore } = await state();
    await t.redis.stop();
    try {
      const answers = [
        await t.api.post(`/api/pools/titles/${GROUP}/pop`),
        await t.api.post(`/api/pools/titles/${GROUP}/pop-many`, { count: 3 }),
        await t.api.post(`/api/sessions/${SESSION}/messages`, { role: 'user', content: 'while Redis is down' }),
        await t.api.get(`/api/sessions/${SESSION}/messages?limit=10`),
      ];
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('redis_unavailable');
      }
      const rows = await t.platform.ctx.db.pool.query<{ status: string; n: string }>(
        'SELECT status, count(*) AS n FROM titles WHERE group_id = $1 GROUP BY status ORDER BY status',
        [GROUP],
      );
      expect(rows.rows).toEqual(rowsBefore);
      const stored = await t.platform.ctx.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM chat_messages WHERE session_id = $1', [SESSION]);
      expect(Number(stored.rows[0]!.n)).toBe(storedBefore);
    } finally {
      t.redis = await t.redis.restart();
    }
    await waitFor(async () => (await t.api.post(`/api/pools/titles/${GROUP}/pop`)).status === 200, { timeoutMs: 15_000, message: 'pops did not recover' });
    // The message cache has its own connections, which reconnect on their own schedule.
    await waitFor(async () => (await t.api.post(`/api/sessions/${SESSION}/messages`, { role: 'user', content: 'after Redis returned' })).status === 201, {
      timeoutMs: 15_000,
      message: 'appends did not recover',
    });
  });
});
