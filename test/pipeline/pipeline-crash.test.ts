/**
 * Idempotency under a crash: a pipeline process SIGKILLed after its transaction committed but
 * before the result job was acknowledged. The re-delivered result (stalled-job recovery in a
 * new process) is recognised by its processed_results row: stats and snapshots are counted
 * once, the follow-up steps (item hashes, next crawl) are completed, and the IP ends with
 * exactly one pending crawl.
 *
 * The window is made deterministic without test hooks: the test holds the IP's row lock so the
 * pipeline's transaction waits, freezes Redis (SIGSTOP) so nothing can be acknowledged, lets the
 * transaction commit, then kills the process.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, resultOf, sold } from './helpers.js';

describe('pipeline crash between persisting and acknowledging', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let sql: pg.Client;
  let q: CrawlQueues;
  const procs: PlatformProcess[] = [];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    q = new CrawlQueues(redis.url);
    env = testEnv(redis, db, { WORKER_LOCK_DURATION_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000', SCHEDULER_SPREAD_SECONDS: '0' });
  });
  afterAll(async () => {
    try {
      process.kill(redis.pid, 'SIGCONT');
    } catch {
      // already running or gone
    }
    for (const p of procs) await p.kill();
    await q?.close();
    await sql?.end();
    await db?.drop();
    await redis?.destroy();
  });

  it('counts the result once and completes the follow-up steps after a SIGKILL', async () => {
    // Crawled a minute ago: this result is compared with that crawl and counted (a first crawl counts nothing).
    const ipId = (
      await sql.query(`INSERT INTO ips (name, keyword, last_crawled_at, updated_at) VALUES ('Crash', 'crash', now() - interval '1 minute', now()) RETURNING id`)
    ).rows[0].id as number;
    procs.push(await spawnPlatform('cluster,pipeline', env));
    const taskId = await waitFor(() => q.chain(ipId), { message: 'start-up reconciliation did not schedule the IP' });
    await waitFor(async () => ['waiting', 'delayed'].includes(await q.crawl.getJobState(taskId)));
    await waitFor(async () => (await sql.query('SELECT next_crawl_at FROM ips WHERE id = $1', [ipId])).rows[0].next_crawl_at, {
      message: 'reconciliation did not finish',
    });
    await q.crawl.remove(taskId); // the crawler took it

    await sql.query('BEGIN');
    await sql.query('SELECT id FROM ips WHERE id = $1 FOR UPDATE', [ipId]);
    const job = await q.deliver(resultOf({ ipId, taskId }, [onSale('a', 100), onSale('b', 200), onSale('c', 300), sold('d', 400)]));
    const dbName = new URL(db.url).pathname.slice(1);
    const waitingOnRow = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`;
    // Polled outside the locking transaction: inside it, pg_stat_activity is one frozen snapshot.
    await waitFor(async () => (await sql.query('SELECT pg_stat_clear_snapshot()').then(() => sql.query(waitingOnRow, [dbName]))).rows[0].n > 0, {
      message: 'the pipeline transaction never waited on the IP row',
    });

    process.kill(redis.pid, 'SIGSTOP'); // from here on nothing can be acknowledged
    try {
      await sql.query('COMMIT'); // the pipeline's transaction proceeds and commits
      await waitFor(async () => (await sql.query('SELECT 1 FROM processed_results WHERE task_id = $1', [taskId])).rowCount === 1, {
        message: 'the pipeline did not commit',
      });
      await procs[0]!.kill();
    } finally {
      process.kill(redis.pid, 'SIGCONT');
    }
    expect(await q.results.getJobState(job.id!)).toBe('active'); // persisted, never acknowledged

    procs.push(await spawnPlatform('cluster,pipeline', env));
    await waitFor(async () => (await q.results.getJobState(job.id!)) === 'completed', { timeoutMs: 30_000, message: 'the result was not re-delivered' });
    const done = (await q.results.getJob(job.id!))!;
    expect(done.returnvalue).toMatchObject({ status: 'duplicate', taskId });

    const stats = await sql.query('SELECT inflow, outflow, sample_count FROM ip_stats_hourly WHERE ip_id = $1', [ipId]);
    expect(stats.rows).toEqual([{ inflow: 3, outflow: 1, sample_count: 1 }]);
    expect((await sql.query('SELECT count(*)::int AS n FROM item_snapshots WHERE ip_id = $1', [ipId])).rows[0].n).toBe(4);
    expect((await sql.query('SELECT count(*)::int AS n FROM processed_results WHERE ip_id = $1', [ipId])).rows[0].n).toBe(1);
    expect(await q.redis.hget(`wp:item:{${ipId}}:d`, 'status')).toBe('sold');

    const pending = await q.pendingFor(ipId);
    expect(pending).toHaveLength(1);
    expect(await q.chain(ipId)).toBe(pending[0]!.id);
    expect(pending[0]!.id).not.toBe(taskId);
  }, 180_000);
});
