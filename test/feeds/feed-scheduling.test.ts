/**
 * Invariant 3 for feeds, checked in Redis (BullMQ's own sets), not only in the database: exactly
 * one pending scheduled refresh per feed after subscribing, refreshing, manual refreshes, repeated
 * schedule-feed calls, retries and restarts; an interval change moves it; a delete removes it;
 * a lost chain is repaired by the reconciler without ever adding a second one; manual refreshes
 * run ahead of periodic ones.
 */
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodicDedupId } from '../../src/feeds/feed-scheduler.js';
import { wireFeeds } from '../../src/feeds/wiring.js';
import { replayDeadRefresh } from '../../src/feeds/replay-refresh.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { delayedDueAt, jobsOfFeed, pendingJobsOfFeed, waitForTask } from './support.js';

const ENV = {
  FEED_DOMAIN_MIN_INTERVAL_MS: '0',
  FEED_ATTEMPTS: '3',
  FEED_RETRY_DELAY_MS: '100',
  FEED_RECONCILE_INTERVAL_SECONDS: '0',
  FEED_WORKER_CONCURRENCY: '4',
};
const MIN = 60_000;

describe('feed scheduling', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let server: FeedServer;
  let t: TestPlatform;
  let queue: Queue;

  beforeAll(async () => {
    [redis, db, server] = await Promise.all([startTestRedis(), createTestDatabase(), startFeedServer()]);
    t = await startTestPlatform({ roles: ['feeds', 'api'], redis, db, env: ENV });
    queue = t.platform.ctx.queues.queue('feedRefresh');
  });
  afterAll(async () => {
    await t?.stop();
    await server?.stop();
    await redis?.destroy();
    await db?.drop();
  });

  async function subscribe(path: string, body: Record<string, unknown> = {}) {
    const res = await t.api.post('/api/feeds', { url: server.url(path), ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: number; taskId: string };
  }

  /** Waits until nothing of the feed runs and no manual refresh is pending, then returns its pending jobs. */
  async function settledPending(feedId: number) {
    // Something pending is part of settling: after a restart the reconciler adds a lost chain a moment later.
    await waitFor(
      async () => {
        if ((await jobsOfFeed(queue, feedId, ['active'])).length > 0) return false;
        const pending = await pendingJobsOfFeed(queue, feedId);
        return pending.length > 0 && pending.every((j) => j.data.trigger !== 'manual' && (j.delay ?? 0) > 0);
      },
      {
        message: `feed ${feedId} did not settle`,
      },
    );
    return pendingJobsOfFeed(queue, feedId);
  }

  async function expectOneChain(feedId: number) {
    const pending = await settledPending(feedId);
    expect(pending.map((j) => j.data.trigger)).toEqual(['periodic']);
    expect(await queue.getDeduplicationJobId(periodicDedupId(feedId))).toBe(pending[0]!.id);
    return pending[0]!;
  }

  it('subscribing schedules the first refresh at once, which leaves exactly one periodic refresh one interval later', async () => {
    const f = await subscribe('/rss/chain.xml');
    const first = await queue.getJob(f.taskId);
    expect(first!.data).toEqual({ feedId: f.id, trigger: 'initial', domain: '127.0.0.1' });
    await waitForTask(t.api, f.taskId);
    const next = await expectOneChain(f.id);
    const feed = (await t.api.get(`/api/feeds/${f.id}`)).body;
    const due = await delayedDueAt(t.platform.ctx.redis, queue, next.id!);
    expect(Math.abs(due! - (Date.parse(feed.lastFetchedAt) + 30 * MIN))).toBeLessThan(5000);
    expect(Math.abs(Date.parse(feed.nextRefreshAt) - due!)).toBeLessThan(5000);
  });

  it('schedule-feed without force reports the pending refresh; with force it runs a manual one first and keeps one chain', async () => {
    const f = await subscribe('/rss/manual.xml');
    await waitForTask(t.api, f.taskId);
    const chain = await expectOneChain(f.id);

    const plain = await t.api.post('/api/queue/schedule-feed', { feed_id: f.id, force_immediate: false });
    expect(plain.status).toBe(202);
    expect(plain.body).toMatchObject({ task_id: chain.id, status: 'already_scheduled' });
    expect(plain.body.delay_seconds).toBeGreaterThan(29 * 60);
    expect(plain.body.delay_seconds).toBeLessThanOrEqual(30 * 60);

    const forced = await t.api.post('/api/queue/schedule-feed', { feed_id: f.id, force_immediate: true });
    expect(forced.body).toMatchObject({ status: 'queued', delay_seconds: 0 });
    const manual = await queue.getJob(forced.body.task_id);
    expect(manual!.data.trigger).toBe('manual');
    expect(manual!.opts.priority).toBeLessThan(chain.opts.priority!);
    expect((await waitForTask(t.api, forced.body.task_id)).result).toMatchObject({ trigger: 'manual', outcome: 'refreshed' });

    // Still the same single chain, moved to one interval after the manual refresh.
    const after = await expectOneChain(f.id);
    expect(after.id).toBe(chain.id);
    const lastFetchedAt = Date.parse((await t.api.get(`/api/feeds/${f.id}`)).body.lastFetchedAt);
    expect(Math.abs((await delayedDueAt(t.platform.ctx.redis, queue, after.id!))! - (lastFetchedAt + 30 * MIN))).toBeLessThan(5000);

    // A burst of mixed calls: still one chain when it is over.
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.api.post('/api/queue/schedule-feed', { feed_id: String(f.id), force_immediate: i % 2 === 0 })),
    );
    expect(replies.every((r) => r.status === 202)).toBe(true);
    expect(new Set(replies.map((r) => r.body.status))).not.toContain(undefined);
    await expectOneChain(f.id);
  });

  it('moves the pending refresh when the interval changes (checked in Redis)', async () => {
    const f = await subscribe('/rss/interval.xml');
    await waitForTask(t.api, f.taskId);
    const chain = await expectOneChain(f.id);
    const res = await t.api.patch(`/api/feeds/${f.id}`, { refreshIntervalMinutes: 120 });
    expect(res.status).toBe(200);
    expect(res.body.refreshIntervalMinutes).toBe(120);
    const after = await expectOneChain(f.id);
    expect(after.id).toBe(chain.id);
    const due = (await delayedDueAt(t.platform.ctx.redis, queue, after.id!))!;
    expect(Math.abs(due - (Date.parse(res.body.lastFetchedAt) + 120 * MIN))).toBeLessThan(5000);
    expect(Math.abs(Date.parse(res.body.nextRefreshAt) - due)).toBeLessThan(5000);

    const shorter = await t.api.patch(`/api/feeds/${f.id}`, { refreshIntervalMinutes: 5 });
    const dueShorter = (await delayedDueAt(t.platform.ctx.redis, queue, (await expectOneChain(f.id)).id!))!;
    expect(Math.abs(dueShorter - (Date.parse(shorter.body.lastFetchedAt) + 5 * MIN))).toBeLessThan(5000);
  });

  it('removes every pending refresh of a deleted feed from Redis', async () => {
    const f = await subscribe('/rss/deleted.xml');
    await waitForTask(t.api, f.taskId);
    await expectOneChain(f.id);
    await t.api.post('/api/queue/schedule-feed', { feed_id: f.id, force_immediate: true });
    expect((await t.api.delete(`/api/feeds/${f.id}`)).status).toBe(204);
    expect((await t.api.get(`/api/feeds/${f.id}`)).status).toBe(404);
    await waitFor(async () => (await jobsOfFeed(queue, f.id, ['active'])).length === 0);
    expect(await pendingJobsOfFeed(queue, f.id)).toEqual([]);
    expect(await queue.getDeduplicationJobId(periodicDedupId(f.id))).toBeNull();
    expect(await t.platform.ctx.db.prisma.article.count({ where: { feedId: f.id } })).toBe(0);
  });

  it('a refresh running while its feed is deleted schedules nothing', async () => {
    const f = await subscribe('/rss/deleted-while-running.xml?delay=1500');
    await waitFor(async () => (await t.platform.ctx.redis.get(t.platform.ctx.keys.feedLock(f.id))) === f.taskId, { message: 'refresh never took the lock' });
    expect((await t.api.delete(`/api/feeds/${f.id}`)).status).toBe(204);
    const task = await waitForTask(t.api, f.taskId);
    expect(task.result).toMatchObject({ outcome: 'skipped', reason: 'feed_deleted' });
    expect(await jobsOfFeed(queue, f.id, ['delayed', 'waiting', 'prioritized', 'active'])).toEqual([]);
    expect(await queue.getDeduplicationJobId(periodicDedupId(f.id))).toBeNull();
  });

  it('retries never add a chain: a failing feed ends with one backed-off periodic refresh', async () => {
    const f = await subscribe('/status/503');
    const task = await waitForTask(t.api, f.taskId);
    expect(task).toMatchObject({ state: 'failed', attemptsMade: 3 });
    const chain = await expectOneChain(f.id);
    const feed = (await t.api.get(`/api/feeds/${f.id}`)).body;
    expect(feed).toMatchObject({ status: 'error', errorCount: 1 });
    expect(Math.abs((await delayedDueAt(t.platform.ctx.redis, queue, chain.id!))! - (Date.now() + 60 * MIN))).toBeLessThan(10_000);
  });

  it("replays a dead refresh as the feed's pending periodic refresh, now: never a second one", async () => {
    server.setStatus('replayed', 404);
    const f = await subscribe('/versioned/replayed.xml');
    const dead = await waitForTask(t.api, f.taskId);
    expect(dead).toMatchObject({ state: 'failed', attemptsMade: 1 });
    const chain = await expectOneChain(f.id); // the failed refresh queued its successor, backed off
    expect(await chain.getState()).toBe('delayed');

    server.setStatus('replayed', undefined);
    const replay = await replayDeadRefresh(wireFeeds(t.platform.ctx), f.taskId);
    expect(replay).toEqual({ jobId: f.taskId, status: 'moved_forward', taskId: chain.id });
    expect(await queue.getJob(f.taskId)).toBeUndefined(); // out of the failed set
    // The chain's own job ran now, refreshed the feed, and left exactly one successor.
    const done = await waitForTask(t.api, chain.id!);
    expect(done.result).toMatchObject({ outcome: 'refreshed', trigger: 'periodic' });
    expect((await t.api.get(`/api/feeds/${f.id}`)).body).toMatchObject({ status: 'ok', errorCount: 0 });
    const next = await expectOneChain(f.id);
    expect(next.id).not.toBe(chain.id);
    await expect(replayDeadRefresh(wireFeeds(t.platform.ctx), chain.id!)).rejects.toThrow(/not failed/);
  });

  it('restarts add nothing, and the reconciler repairs a lost or dead chain with exactly one job', async () => {
    const feeds = await Promise.all(['/rss/r1.xml', '/rss/r2.xml', '/rss/r3.xml'].map((p) => subscribe(p)));
    for (const f of feeds) await waitForTask(t.api, f.taskId);
    const before = await Promise.all(feeds.map((f) => expectOneChain(f.id)));

    // Lost: the pending job vanished (deleted in Bull Board, Redis data lost). Dead: the chain's
    // key names a finished job (what a job failed by too many stalls leaves behind).
    await before[0]!.remove();
    await before[1]!.remove();
    await t.platform.ctx.redis.set(queue.toKey(`de:${periodicDedupId(feeds[1]!.id)}`), feeds[1]!.taskId);
    expect(await pendingJobsOfFeed(queue, feeds[0]!.id)).toEqual([]);
    expect(await pendingJobsOfFeed(queue, feeds[1]!.id)).toEqual([]);

    await t.stop();
    t = await startTestPlatform({ roles: ['cluster', 'feeds', 'api'], redis, db, env: ENV });
    queue = t.platform.ctx.queues.queue('feedRefresh');

    const after = await Promise.all(feeds.map((f) => expectOneChain(f.id)));
    expect(after[2]!.id).toBe(before[2]!.id); // untouched chain: the same job, nothing added
    for (const [i, f] of feeds.entries()) {
      const feed = (await t.api.get(`/api/feeds/${f.id}`)).body;
      expect(Math.abs((await delayedDueAt(t.platform.ctx.redis, queue, after[i]!.id!))! - (Date.parse(feed.lastFetchedAt) + 30 * MIN))).toBeLessThan(5000);
    }

    // Another restart: still exactly one each.
    await t.stop();
    t = await startTestPlatform({ roles: ['cluster', 'feeds', 'api'], redis, db, env: ENV });
    queue = t.platform.ctx.queues.queue('feedRefresh');
    const again = await Promise.all(feeds.map((f) => expectOneChain(f.id)));
    expect(again.map((j) => j.id)).toEqual(after.map((j) => j.id));
  });

  it('runs manual refreshes ahead of periodic work', async () => {
    // Queue work while no worker runs, then start one worker that takes one job at a time.
    await t.stop();
    t = await startTestPlatform({ roles: ['api'], redis, db, env: ENV });
    queue = t.platform.ctx.queues.queue('feedRefresh');
    const feeds = [];
    for (const name of ['p1', 'p2', 'p3', 'p4']) feeds.push(await subscribe(`/rss/${name}.xml`));
    const manual = await t.api.post('/api/queue/schedule-feed', { feed_id: feeds[3]!.id, force_immediate: true });
    expect(manual.body.status).toBe('queued');

    const worker = await startTestPlatform({ roles: ['feeds'], redis, db, env: { ...ENV, FEED_WORKER_CONCURRENCY: '1' } });
    try {
      await waitForTask(t.api, manual.body.task_id);
      for (const f of feeds) await waitForTask(t.api, f.taskId);
      const order = server.requests.filter((r) => /^\/rss\/p\d\.xml$/.test(r.path)).map((r) => r.path);
      expect(order[0]).toBe('/rss/p4.xml');
    } finally {
      await worker.stop();
    }
  });
});
