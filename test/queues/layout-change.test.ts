/**
 * Changing QUEUE_SHARDS keeps dead jobs within reach (single Redis). A feed's refresh dies in the
 * 3-partition layout; the platform restarts with QUEUE_SHARDS=1. The older layout holds nothing to
 * run, only that dead job: it is kept (still recorded, its partitions listed), so the dead-job
 * console finds the job and an operator removes it; the next start finds the layout empty and
 * forgets it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/redis/keys.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitForTask } from '../feeds/support.js';

const ENV = { FEED_DOMAIN_MIN_INTERVAL_MS: '0', FEED_RECONCILE_INTERVAL_SECONDS: '0' };

describe('QUEUE_SHARDS changed with a dead job in the old layout', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let server: FeedServer;
  let t: TestPlatform | undefined;

  beforeAll(async () => {
    [redis, db, server] = await Promise.all([startTestRedis(), createTestDatabase(), startFeedServer()]);
  });
  afterAll(async () => {
    await t?.stop();
    await server?.stop();
    await redis?.destroy();
    await db?.drop();
  });

  const start = async (shards: number) => (t = await startTestPlatform({ roles: ['feeds', 'api'], redis, db, env: { ...ENV, QUEUE_SHARDS: String(shards) } }));
  const layouts = async () => {
    const client = new Redis(redis.url);
    try {
      return (await client.smembers(createKeys('wp').queueLayouts())).sort();
    } finally {
      client.disconnect();
    }
  };
  const partitionsOf = async (platform: TestPlatform) =>
    ((await platform.api.get('/api/queues')).body.queues as { name: string; partitions?: { name: string }[] }[])
      .find((q) => q.name === 'feed-refresh')!
      .partitions?.map((p) => p.name) ?? [];

  it('keeps the old layout while its dead job is there, and forgets it once the job is gone', async () => {
    // 3 partitions: the feed's refresh dies (404 is permanent), then the feed goes, so nothing is
    // left to run in the layout: only the dead job.
    let p = await start(3);
    server.setStatus('gone-for-good', 404);
    const sub = await p.api.post('/api/feeds', { url: server.url('/versioned/gone-for-good.xml') });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const feedId = sub.body.id as number;
    expect((await waitForTask(p.api, sub.body.taskId)).state).toBe('failed');
    expect((await p.api.delete(`/api/feeds/${feedId}`)).status).toBe(204);
    await p.stop();

    // QUEUE_SHARDS=1: the 3-layout is kept for its dead job, which the console finds in its partition.
    p = await start(1);
    expect(await layouts()).toEqual(['1', '3']);
    expect(await partitionsOf(p)).toEqual(['feed-refresh', 'feed-refresh.0-of-3', 'feed-refresh.1-of-3', 'feed-refresh.2-of-3']);
    const dead = await p.api.get('/api/dead-jobs?queue=feed-refresh');
    expect(dead.status).toBe(200);
    expect(dead.body.jobs.map((j: { id: string; queue: string }) => [j.id, j.queue])).toEqual([[sub.body.taskId, `feed-refresh.${feedId % 3}-of-3`]]);
    const removed = await p.api.delete('/api/dead-jobs?queue=feed-refresh');
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toMatchObject({ removed: 1 });
    await p.stop();

    // Nothing left there: forgotten.
    p = await start(1);
    expect(await layouts()).toEqual(['1']);
    expect(await partitionsOf(p)).toEqual([]);
    expect((await p.api.get('/api/dead-jobs?queue=feed-refresh')).body.jobs).toEqual([]);
  });
});
