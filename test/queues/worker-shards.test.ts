/**
 * Queue partitions on a single Redis, as a user pins them: QUEUE_SHARDS=6 and WORKER_SHARDS=0-2.
 * Feeds land in the partition of their id (feed-refresh.<id % 6>); this process refreshes the
 * feeds of partitions 0-2 and leaves those of 3-5 waiting for another process; GET /api/cluster
 * shows which partitions it takes, and GET /api/queues counts each partition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedServer } from '../fixtures/feeds/feed-server.js';
import type { TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { startFeedPlatform } from '../feeds/support.js';

describe('WORKER_SHARDS pins a process to some partitions', () => {
  let t: TestPlatform;
  let server: FeedServer;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, server, stop } = await startFeedPlatform({ env: { QUEUE_SHARDS: '6', WORKER_SHARDS: '0-2' } }));
  });
  afterAll(() => stop?.());

  it('takes jobs of its partitions only, and says which', async () => {
    const feeds: { id: number; taskId: string; path: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const path = `/rss/pinned-${i}.xml`;
      const res = await t.api.post('/api/feeds', { url: server.url(`${path}?items=2`) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      feeds.push({ ...(res.body as { id: number; taskId: string }), path });
    }
    const mine = feeds.filter((f) => f.id % 6 <= 2);
    const others = feeds.filter((f) => f.id % 6 > 2);
    expect(mine.length).toBeGreaterThan(0);
    expect(others.length).toBeGreaterThan(0);

    const status = async (id: number) => (await t.api.get(`/api/feeds/${id}`)).body.status as string;
    await waitFor(async () => (await Promise.all(mine.map((f) => status(f.id)))).every((s) => s === 'ok'), {
      timeoutMs: 30_000,
      message: 'feeds of partitions 0-2 not refreshed',
    });
    // Every feed of partitions 0-2 has been fetched by now; those of 3-5 never were, and their first
    // refresh still waits, each in its feed's partition.
    const fetched = new Set(server.requests.map((r) => r.path));
    for (const f of others) {
      expect(await status(f.id)).toBe('pending');
      const task = (await t.api.get(`/api/tasks/${f.taskId}`)).body;
      expect(task.queue).toBe(`feed-refresh.${f.id % 6}-of-6`);
      expect(['waiting', 'prioritized', 'delayed']).toContain(task.state);
    }
    for (const f of mine) expect(fetched.has(f.path)).toBe(true);
    for (const f of others) expect(fetched.has(f.path)).toBe(false);

    const cluster = (await t.api.get('/api/cluster')).body;
    const me = cluster.instances.find((i: { roles: string[] }) => i.roles.includes('feeds'));
    expect(me.queues.filter((q: string) => q.startsWith('feed-refresh')).sort()).toEqual(['feed-refresh.0-of-6', 'feed-refresh.1-of-6', 'feed-refresh.2-of-6']);

    const queues = (await t.api.get('/api/queues')).body.queues as {
      name: string;
      counts: Record<string, number>;
      partitions?: { name: string; counts: Record<string, number> }[];
    }[];
    const refresh = queues.find((q) => q.name === 'feed-refresh')!;
    expect(refresh.partitions!.map((p) => p.name)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `feed-refresh.${i}-of-6`));
    const pendingIn = (p: { counts: Record<string, number> }) => (p.counts.waiting ?? 0) + (p.counts.prioritized ?? 0);
    for (const p of refresh.partitions!) {
      const index = Number(/\.(\d+)-of-6$/.exec(p.name)![1]);
      expect(pendingIn(p)).toBe(index <= 2 ? 0 : others.filter((f) => f.id % 6 === index).length);
    }
    expect(pendingIn(refresh)).toBe(others.length);

    // Bull Board lists every partition, with the delimiter its sidebar groups them by.
    const board = (await t.api.get('/admin/queues/api/queues')).body.queues as { name: string; delimiter: string }[];
    const partitions = board.filter((q) => q.name.startsWith('feed-refresh.'));
    expect(partitions.map((q) => q.name).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `feed-refresh.${i}-of-6`));
    expect(partitions.every((q) => q.delimiter === '.')).toBe(true);
  });
});
