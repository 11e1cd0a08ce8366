/**
 * Invariants 2, 3 and 10 for the result pipeline when Redis freezes under it: results are being
 * processed (their transactions committed) when Redis is frozen (SIGSTOP) for longer than the job
 * lock, so nothing after the commit can reach Redis and every lock expires. After SIGCONT each
 * result completes, is counted once (one processed_results row, stats and snapshots once), every
 * IP keeps exactly one pending crawl named by its chain, no job failed, and the platform logged
 * nothing at error level: the lost locks and the hand-backs are expected under an outage.
 *
 * The window is made deterministic without test hooks, as in pipeline-crash.test.ts: the test
 * holds the IPs' rows so the pipeline's transactions wait, freezes Redis, then lets them commit.
 */
import { Writable } from 'node:stream';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logging/logger.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv, TEST_ADMIN } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, resultOf, sold } from './helpers.js';

const LOCK_MS = 2000;

describe('result pipeline with Redis frozen past the job lock', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let platform: PlatformHandle;
  let api: ApiClient;
  let q: CrawlQueues;
  let sql: pg.Client;
  let dataDir: string;
  const logged: { level: number; msg: string; err?: unknown }[] = [];

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    const env = testEnv(redis, db, {
      LOG_LEVEL: 'debug',
      WORKER_LOCK_DURATION_MS: String(LOCK_MS),
      WORKER_STALLED_INTERVAL_MS: '1000',
      SCHEDULER_SPREAD_SECONDS: '0',
    });
    dataDir = env.DATA_DIR!;
    const config = loadConfig(env);
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) logged.push(JSON.parse(line) as (typeof logged)[number]);
        done();
      },
    });
    platform = await startPlatform({ roles: ['pipeline', 'api'], config, logger: createLogger(config, sink) });
    api = new ApiClient(platform.apiUrl!);
    await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
    q = new CrawlQueues(redis.url);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  afterAll(async () => {
    try {
      process.kill(redis.pid, 'SIGCONT');
    } catch {
      // running, or gone
    }
    await sql?.query('ROLLBACK').catch(() => undefined);
    await sql?.end();
    await q?.close();
    await platform?.stop();
    await db?.drop();
    await redis?.destroy();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes every result once after SIGCONT: counted once, one pending crawl per IP, nothing failed, no error logged', async () => {
    const ips: number[] = [];
    for (const name of ['Freeze A', 'Freeze B', 'Freeze C']) {
      const res = await api.post('/api/ips', { name, keyword: name.toLowerCase().replace(' ', '-') });
      expect(res.status).toBe(201);
      ips.push(res.body.id);
    }
    // Crawled a minute ago: the results are compared with that crawl and counted (a first crawl counts nothing).
    await sql.query(`UPDATE ips SET last_crawled_at = now() - interval '1 minute' WHERE id = ANY($1)`, [ips]);
    const tasks = new Map<number, string>();
    for (const ip of ips) {
      const taskId = await waitFor(() => q.chain(ip), { message: `IP ${ip} has no crawl chain` });
      await q.crawl.remove(taskId); // the crawler took it
      tasks.set(ip, taskId);
    }

    await sql.query('BEGIN');
    await sql.query('SELECT id FROM ips WHERE id = ANY($1) FOR UPDATE', [ips]);
    const jobs = [];
    for (const ip of ips)
      jobs.push(await q.deliver(resultOf({ ipId: ip, taskId: tasks.get(ip)! }, [onSale(`${ip}-a`, 100), onSale(`${ip}-b`, 200), sold(`${ip}-c`, 300)])));
    const dbName = new URL(db.url).pathname.slice(1);
    const waitingOnRows = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`;
    // Polled outside the locking transaction: inside it, pg_stat_activity is one frozen snapshot.
    await waitFor(async () => (await sql.query('SELECT pg_stat_clear_snapshot()').then(() => sql.query(waitingOnRows, [dbName]))).rows[0].n >= ips.length, {
      message: 'the pipeline transactions never waited on the IP rows',
    });

    process.kill(redis.pid, 'SIGSTOP');
    const frozenAt = Date.now();
    try {
      await sql.query('COMMIT'); // the transactions proceed and commit; nothing after them reaches Redis
      await waitFor(async () => (await sql.query('SELECT count(*)::int AS n FROM processed_results WHERE ip_id = ANY($1)', [ips])).rows[0].n === ips.length, {
        message: 'the pipeline did not commit',
      });
      await sleep(Math.max(0, frozenAt + LOCK_MS + 1000 - Date.now())); // the fault itself: frozen longer than the lock
    } finally {
      process.kill(redis.pid, 'SIGCONT');
    }

    for (const job of jobs) {
      await waitFor(async () => ['completed', 'failed'].includes(await q.results.getJobState(job.id!)), {
        timeoutMs: 60_000,
        message: `result ${job.id} not processed after SIGCONT`,
      });
      const done = (await q.results.getJob(job.id!))!;
      expect(done.failedReason).toBeUndefined();
      expect(await done.getState()).toBe('completed');
      expect(['processed', 'duplicate']).toContain(done.returnvalue.status);
    }
    expect(await q.results.getFailedCount()).toBe(0);

    for (const ip of ips) {
      // Counted once: one processed_results row, one sample in the hour, each item once.
      expect((await sql.query('SELECT count(*)::int AS n FROM processed_results WHERE ip_id = $1', [ip])).rows[0].n).toBe(1);
      expect((await sql.query('SELECT inflow, outflow, sample_count FROM ip_stats_hourly WHERE ip_id = $1', [ip])).rows).toEqual([
        { inflow: 2, outflow: 1, sample_count: 1 },
      ]);
      expect((await sql.query('SELECT count(*)::int AS n FROM item_snapshots WHERE ip_id = $1', [ip])).rows[0].n).toBe(3);
      // The follow-up steps ran: the item states and exactly one next crawl, named by the chain.
      expect(await q.redis.hget(`wp:item:{${ip}}:${ip}-c`, 'status')).toBe('sold');
      const pending = await waitFor(
        async () => {
          const p = await q.pendingFor(ip);
          return p.length === 1 && (await q.chain(ip)) === p[0]!.id ? p : undefined;
        },
        { message: `IP ${ip} does not have exactly one pending crawl named by its chain` },
      );
      expect(pending[0]!.id).not.toBe(tasks.get(ip));
    }
    const count = (msg: string) => logged.filter((l) => l.msg.startsWith(msg)).length;
    console.log(
      `results: ${(await Promise.all(jobs.map(async (j) => (await q.results.getJob(j.id!))!.returnvalue.status))).join(', ')}; stalled: ${count('stalled job handed back')}, outage delays: ${count('Redis unavailable')}, locks lost: ${count('job lock lost')}`,
    );
    expect(logged.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${JSON.stringify(l.err ?? '')}`)).toEqual([]);
  }, 120_000);
});
