/**
 * Feeds across real processes (PostgreSQL, one Redis): an API process and two feeds worker
 * processes.
 * - 50 concurrent schedule-feed calls (mixed force_immediate) for one feed: one refresh runs at a
 *   time, and afterwards exactly one pending scheduled refresh exists.
 * - 20 feeds on 2 domains: the spacing between requests to one domain, measured at the server,
 *   is never under FEED_DOMAIN_MIN_INTERVAL_MS (1 s), and both workers did refreshes.
 * - a worker SIGKILLed in the middle of a refresh: the other worker finishes that refresh, and
 *   the feed still has exactly one pending scheduled refresh.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodicDedupId } from '../../src/feeds/feed-scheduler.js';
import { createKeys } from '../../src/redis/keys.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_ADMIN, testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { jobsOfFeed, pendingJobsOfFeed, waitForTask } from './support.js';

const keys = createKeys('wp');

describe('feeds across processes', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let server: FeedServer;
  let processes: PlatformProcess[] = [];
  let api: ApiClient;
  let queue: Queue;

  beforeAll(async () => {
    [redis, db, server] = await Promise.all([startTestRedis(), createTestDatabase(), startFeedServer({ hosts: ['127.0.0.1', '127.0.0.2', '127.0.0.3'] })]);
    const env = testEnv(redis, db, {
      FEED_DOMAIN_MIN_INTERVAL_MS: '1000',
      FEED_WORKER_CONCURRENCY: '10',
      FEED_RECONCILE_INTERVAL_SECONDS: '0',
      DATABASE_POOL_SIZE: '5',
      // A killed worker's job is handed to the other one within seconds.
      WORKER_LOCK_DURATION_MS: '5000',
      WORKER_STALLED_INTERVAL_MS: '1000',
    });
    // Started together; whichever started is stopped in afterAll even if another failed to start.
    const started = await Promise.allSettled([
      spawnPlatform('api', { ...env, INSTANCE_ID: 'api-1' }, { startTimeoutMs: 120_000 }),
      spawnPlatform('feeds', { ...env, INSTANCE_ID: 'feeds-1' }, { startTimeoutMs: 120_000 }),
      spawnPlatform('feeds', { ...env, INSTANCE_ID: 'feeds-2' }, { startTimeoutMs: 120_000 }),
    ]);
    processes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    api = new ApiClient(processes[0]!.apiUrl!);
    await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
    queue = new Queue('feed-refresh', { connection: { url: redis.url }, prefix: keys.bullPrefix });
  });
  afterAll(async () => {
    await queue?.close();
    await Promise.all(processes.map((p) => p.stop()));
    await server?.stop();
    await redis?.destroy();
    await db?.drop();
  });

  it('50 concurrent schedule-feed calls: one refresh at a time, then exactly one pending scheduled refresh', async () => {
    const path = '/rss/hot.xml';
    const created = await api.post('/api/feeds', { url: server.url(`${path}?delay=400`) });
    expect(created.status).toBe(201);
    const feedId: number = created.body.id;
    await waitForTask(api, created.body.taskId);

    const first = await api.post('/api/queue/schedule-feed', { feed_id: feedId, force_immediate: true });
    expect(first.body.status).toBe('queued');
    // 50 calls at once, staggered over ~1.5 s so that they meet the feed pending, running and done.
    const replies = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        await sleep((i % 10) * 150);
        return api.post('/api/queue/schedule-feed', { feed_id: feedId, force_immediate: i % 2 === 0 });
      }),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(202));
    for (const r of replies) expect(['queued', 'already_running', 'already_scheduled']).toContain(r.body.status);

    // Everything the burst queued has run: no manual refresh left, nothing active.
    // (pending first, then active: a job taken between the two reads is seen by the second one)
    await waitFor(
      async () =>
        (await pendingJobsOfFeed(queue, feedId)).every((j) => j.data.trigger === 'periodic' && (j.delay ?? 0) > 0) &&
        (await jobsOfFeed(queue, feedId, ['active'])).length === 0,
      { timeoutMs: 60_000, message: 'the burst did not settle' },
    );
    const taskIds = new Set([first.body.task_id, ...replies.map((r) => r.body.task_id)]);
    const tasks = await Promise.all([...taskIds].map((id) => queue.getJob(id)));
    const finished = tasks.filter((j) => j && j.finishedOn);
    for (const job of finished) expect(['refreshed', 'not_modified', 'skipped']).toContain(job!.returnvalue.outcome);

    // One at a time: the server never saw two requests of this feed at once (each takes 400 ms),
    // and the refreshes' requests did not overlap.
    expect(server.maxInFlight(path)).toBe(1);
    const hits = server.requests
      .filter((r) => r.path === path)
      .map((r) => r.at)
      .sort((a, b) => a - b);
    for (let i = 1; i < hits.length; i++) expect(hits[i]! - hits[i - 1]!).toBeGreaterThanOrEqual(400);

    // Exactly one pending scheduled refresh, owned by the chain's key.
    const pending = await pendingJobsOfFeed(queue, feedId);
    expect(pending).toHaveLength(1);
    // (the chain's jobs carry the feed's domain: they take its turn before loading the feed)
    expect(pending[0]!.data).toEqual({ feedId, trigger: 'periodic', domain: '127.0.0.1' });
    expect(await queue.getDeduplicationJobId(periodicDedupId(feedId))).toBe(pending[0]!.id);
    expect(await queue.getDeduplicationJobId(`feed-${feedId}-manual`)).toBeNull();
  });

  it('20 feeds on 2 domains: requests to one domain are never under 1 s apart, across both workers', async () => {
    const started = server.requests.length;
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.post('/api/feeds', { url: server.url(`/rss/spaced-${i}.xml`, i % 2 === 0 ? '127.0.0.2' : '127.0.0.3') })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
    const tasks = await Promise.all(created.map((r) => waitForTask(api, r.body.taskId, 60_000)));
    expect(tasks.map((t) => t.result?.outcome)).toEqual(Array(20).fill('refreshed'));

    const requests = server.requests.slice(started).filter((r) => r.path.startsWith('/rss/spaced-'));
    expect(requests).toHaveLength(20);
    for (const host of ['127.0.0.2', '127.0.0.3']) {
      const at = requests
        .filter((r) => r.host === host)
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(at).toHaveLength(10);
      const gaps = at.slice(1).map((t, i) => t - at[i]!);
      expect(Math.min(...gaps), `gaps at ${host}: ${gaps.map((g) => g.toFixed(1)).join(', ')}`).toBeGreaterThanOrEqual(1000);
    }

    const jobs = await Promise.all(created.map((r) => queue.getJob(r.body.taskId)));
    expect(new Set(jobs.map((j) => j!.processedBy))).toEqual(new Set(['feeds@feeds-1', 'feeds@feeds-2'])); // <role>@<instance id>
    // Ten feeds a domain subscribed at once: all but the first of each domain had to wait for their
    // turn (queued delayed until it, or delayed when they ran early) and ran at priority 0, ahead of
    // any fresh work; waiting spent no attempt (the one made is the refresh).
    expect(jobs.filter((j) => j!.priority === 0).length).toBeGreaterThanOrEqual(16);
    expect(jobs.map((j) => j!.attemptsMade)).toEqual(Array(20).fill(1));
  });

  it('a worker killed mid-refresh: the other one finishes it, and exactly one pending refresh remains', async () => {
    const path = '/rss/killed.xml';
    const created = await api.post('/api/feeds', { url: server.url(`${path}?delay=3000`) });
    const feedId: number = created.body.id;
    await waitForTask(api, created.body.taskId, 60_000);

    const manual = await api.post('/api/queue/schedule-feed', { feed_id: feedId, force_immediate: true });
    expect(manual.body.status).toBe('queued');
    const hitsBefore = server.requests.filter((r) => r.path === path).length;
    await waitFor(() => server.requests.filter((r) => r.path === path).length > hitsBefore, { message: 'the manual refresh never reached the server' });
    const owner = (await queue.getJob(manual.body.task_id))!.processedBy!.replace(/^feeds@/, '');
    const victim = processes.find((p) => p.output().includes(`instance ${owner}`))!;
    expect(victim).toBeDefined();
    await victim.kill(); // mid-exchange: the server is still holding its answer

    const task = await waitForTask(api, manual.body.task_id, 60_000);
    expect(task.state).toBe('completed');
    expect(task.result).toMatchObject({ trigger: 'manual', outcome: 'refreshed' });
    const finished = (await queue.getJob(manual.body.task_id))!;
    expect(finished.processedBy).not.toBe(`feeds@${owner}`);

    const pending = await pendingJobsOfFeed(queue, feedId);
    expect(pending.map((j) => j.data.trigger)).toEqual(['periodic']);
    expect(await queue.getDeduplicationJobId(periodicDedupId(feedId))).toBe(pending[0]!.id);
    expect(await queue.getDeduplicationJobId(`feed-${feedId}-manual`)).toBeNull();
  });
});
