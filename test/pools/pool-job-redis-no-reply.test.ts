/**
 * Invariant 10 for the pools' jobs: a job whose pool command gets no reply within
 * REDIS_COMMAND_TIMEOUT_MS (Redis frozen or too slow; the pools' connection has no ioredis timeout
 * of its own, its commands have a deadline) meets an outage, not a failure: it is delayed without
 * spending an attempt and marks its rows once Redis answers. Before, the deadline's error was not
 * recognised as an outage, so the job failed an attempt (`job failed; will retry`), and enough such
 * freezes made it a dead job (seen in test/e2e/outages-in-flight.test.ts when the embedded Redis froze).
 *
 * Deterministic: a row lock holds the consumed-marks job inside its UPDATE; Redis is then paused
 * for writes (CLIENT PAUSE WRITE) and the lock released, so the job's next command, the trim of
 * the consumed list (a script, a write), gets no reply within its deadline.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { importBatch, metricValue, popMany } from './pool-helpers.js';

const GROUP = 3;
const keys = createKeys('wp');

describe('a pools job whose Redis command gets no reply in time', () => {
  let t: TestPlatform;
  let admin: Redis;
  let locker: pg.Client;
  let watcher: pg.Client;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['api', 'pools'],
      env: { REDIS_COMMAND_TIMEOUT_MS: '300', POOL_SIZE: '20', POOL_REFILL_THRESHOLD: '5', POOL_TRIGGER_INTERVAL_MS: '20' },
    });
    admin = new Redis(t.redis.url);
    locker = new pg.Client({ connectionString: t.db.url });
    await locker.connect();
    watcher = new pg.Client({ connectionString: t.db.url });
    await watcher.connect();
  });
  afterAll(async () => {
    await admin?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    await locker?.end();
    await watcher?.end();
    admin?.disconnect();
    await t?.stop();
  });

  it('is delayed without spending an attempt, and marks its rows once Redis answers', async () => {
    await importBatch(t.api, 'titles', GROUP, 1, 20);
    await waitFor(async () => (await admin.llen(keys.pool('titles', GROUP))) === 20, { message: 'the pool filled' });

    await locker.query('BEGIN');
    await locker.query('SELECT id FROM titles WHERE group_id = $1 FOR UPDATE', [GROUP]);
    const served = await popMany(t.api, 'titles', GROUP, 5);
    expect(served.map((s) => s.source)).toEqual(['pool', 'pool', 'pool', 'pool', 'pool']);
    // The consumed-marks job is in its UPDATE, held by the lock.
    await waitFor(
      async () => {
        // (Not on the locker's connection: a transaction sees one snapshot of pg_stat_activity.)
        const { rows } = await watcher.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%SET status = ''consumed''%'",
        );
        return rows[0]!.n > 0;
      },
      { message: 'the consumed-marks job waiting on the row lock' },
    );
    await admin.call('CLIENT', 'PAUSE', '3000', 'WRITE');
    await locker.query('COMMIT');

    await waitFor(async () => (await metricValue(t.api, 'wp_jobs_delayed_total', { queue: 'pool-consumed', reason: 'outage' })) >= 1, {
      timeoutMs: 20_000,
      message: 'the job delayed for the outage',
    });
    await waitFor(
      async () => {
        const { rows } = await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM titles WHERE group_id = $1 AND status = 'consumed'", [GROUP]);
        return rows[0]!.n === 5 && (await admin.llen(keys.poolConsumed('titles', GROUP))) === 0;
      },
      { timeoutMs: 30_000, message: 'the popped rows marked consumed' },
    );
    expect(await metricValue(t.api, 'wp_jobs_failed_total', { queue: 'pool-consumed' })).toBe(0);
  });
});
