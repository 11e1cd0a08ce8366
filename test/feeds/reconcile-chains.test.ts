/**
 * The feeds' chain reconciliation over pages of feeds, against a real Redis and PostgreSQL: a
 * page's chains read at once and the missing ones started in one bulk add per partition
 * (src/feeds/reconcile-chains.ts). Whatever it finds (no chain, a lost job, a key naming a
 * finished job, a live chain) and however many run at once, each feed ends with exactly one
 * pending periodic refresh, due when its row says, and a live chain is left as it is.
 */
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodicDedupId } from '../../src/feeds/feed-scheduler.js';
import { reconcileChains } from '../../src/feeds/reconcile-chains.js';
import type { FeedServices } from '../../src/feeds/feed-services.js';
import { wireFeeds } from '../../src/feeds/wiring.js';
import { silentLogger } from '../../src/logging/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

/** More than two pages of 500, so paging and the bulk adds of several pages are exercised. */
const FEEDS = 1203;
const MIN = 60_000;

describe('feed chain reconciliation', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let t: TestPlatform;
  let services: FeedServices;
  let queue: Queue;
  const logger = silentLogger();
  const reconcile = () => reconcileChains({ feeds: services.feeds, scheduler: services.scheduler, logger });

  /** Pending periodic refreshes by feed id. */
  async function pendingByFeed(): Promise<Map<number, string[]>> {
    const jobs = await queue.getJobs(['delayed', 'prioritized', 'waiting'], 0, -1);
    const out = new Map<number, string[]>();
    for (const job of jobs) out.set(job.data.feedId, [...(out.get(job.data.feedId) ?? []), job.id!]);
    return out;
  }

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    t = await startTestPlatform({ roles: [], redis, db });
    services = wireFeeds(t.platform.ctx);
    queue = t.platform.ctx.queues.queue('feedRefresh');
    const pool = t.platform.ctx.db.pool;
    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO users (username, password_hash, updated_at) VALUES ('reconcile-owner', 'x', now()) RETURNING id`,
    );
    // Fetched i minutes ago with a 60-minute interval: feed i is due in 60 - i % 50 minutes.
    await pool.query(
      `INSERT INTO feeds (user_id, url, refresh_interval_minutes, status, last_fetched_at, updated_at)
       SELECT $1, 'https://feeds.example/' || i || '.xml', 60, 'ok', now() - make_interval(mins => i % 50), now()
         FROM generate_series(1, $2::int) i`,
      [rows[0]!.id, FEEDS],
    );
  });
  afterAll(async () => {
    await t?.stop();
    await redis?.destroy();
    await db?.drop();
  });

  it('starts every missing chain once, even with two reconciliations at the same time', async () => {
    const [a, b] = await Promise.all([reconcile(), reconcile()]);
    expect(a.checked).toBe(FEEDS);
    expect(b.checked).toBe(FEEDS);
    expect(a.repaired + b.repaired).toBe(FEEDS);

    const pending = await pendingByFeed();
    expect(pending.size).toBe(FEEDS);
    expect([...pending.values()].filter((ids) => ids.length !== 1)).toEqual([]);
    const { rows } = await t.platform.ctx.db.pool.query<{ id: number; due: Date }>(
      `SELECT id, last_fetched_at + make_interval(mins => refresh_interval_minutes) AS due FROM feeds`,
    );
    for (const row of rows) {
      const taskId = pending.get(row.id)![0]!;
      expect(taskId).toBe(await queue.getDeduplicationJobId(periodicDedupId(row.id)));
      const score = await t.platform.ctx.redis.zscore(queue.keys.delayed!, taskId);
      expect(Math.abs(Math.floor(Number(score) / 4096) - row.due.getTime())).toBeLessThan(MIN);
    }
  });

  it('repairs a lost job and a key naming a finished job, and leaves live chains alone', async () => {
    const before = await pendingByFeed();
    const [lost, dead, live] = [7, 600, 1203];
    await (await queue.getJob(before.get(lost)![0]!))!.remove(); // drops its key too: no chain at all
    await (await queue.getJob(before.get(dead)![0]!))!.remove();
    await t.platform.ctx.redis.set(queue.toKey(`de:${periodicDedupId(dead)}`), 'feed-600-finished-long-ago'); // what a job dead of stalls leaves

    expect(await reconcile()).toEqual({ checked: FEEDS, repaired: 2 });
    const after = await pendingByFeed();
    expect(after.size).toBe(FEEDS);
    expect([...after.values()].filter((ids) => ids.length !== 1)).toEqual([]);
    for (const id of [lost, dead]) {
      expect(after.get(id)![0]).not.toBe(before.get(id)![0]);
      expect(await queue.getDeduplicationJobId(periodicDedupId(id))).toBe(after.get(id)![0]);
    }
    const untouched = [...before].filter(([id]) => id !== lost && id !== dead);
    expect(untouched.filter(([id, ids]) => after.get(id)![0] !== ids[0])).toEqual([]);
    expect(after.get(live)).toEqual(before.get(live));

    expect(await reconcile()).toEqual({ checked: FEEDS, repaired: 0 });
  });

  it('counts a chain in an older layout (QUEUE_SHARDS changed) as live, and repairs into the new one', async () => {
    const before = await pendingByFeed();
    await t.stop();
    t = await startTestPlatform({ roles: [], redis, db, env: { QUEUE_SHARDS: '3' } });
    services = wireFeeds(t.platform.ctx);
    const lost = 5;
    const [current, old] = services.scheduler.queuesOf(lost); // old: the one-partition layout, now draining
    expect([current!.name, old!.name]).toEqual(['feed-refresh.2-of-3', 'feed-refresh']);

    await (await old!.getJob(before.get(lost)![0]!))!.remove();
    expect(await reconcile()).toEqual({ checked: FEEDS, repaired: 1 });
    const jobs = [...(await old!.getJobs(['delayed'], 0, -1)), ...(await current!.getJobs(['delayed'], 0, -1))];
    expect(jobs.filter((j) => j.data.feedId === lost).map((j) => j.queueName)).toEqual(['feed-refresh.2-of-3']);
    expect(jobs.filter((j) => j.data.feedId !== lost && j.queueName !== 'feed-refresh')).toEqual([]);
    expect(await reconcile()).toEqual({ checked: FEEDS, repaired: 0 });
  });
});
