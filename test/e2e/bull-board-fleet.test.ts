/**
 * A fleet in Bull Board, as a user runs it: `npm start` in one terminal, `npm run start:role --
 * feeds` and `-- crawler` in two more (attached to its embedded services through DATA_DIR), a
 * feed server and a marketplace of the test's own on loopback. Through the board's own API (what
 * its buttons call, with the admin's login):
 *
 * - the Workers panel of `feed-refresh` lists both processes that refresh feeds, by name
 *   (`feeds@<instance id>`), that of `crawl` both that crawl; the Redis panel answers;
 * - "Retry" on a dead refresh and on a dead crawl ends with the feed or IP healthy and exactly
 *   one pending job of its chain (the dead crawl never runs again as a stale crawl);
 * - "Add job" with bad data answers 4xx and adds nothing; on `crawl` it is refused;
 * - the throughput graph of `feed-refresh` has per-minute points once refreshes ran in two minutes.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { FixtureMarketplace } from '../../src/services/fixture-marketplace/server.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const BOARD = '/admin/queues/api';
/** What a user would set for this: loopback servers allowed, short crawls, quick retries. */
const SETTINGS = {
  OUTBOUND_ALLOW: '127.0.0.0/8',
  FEED_DOMAIN_MIN_INTERVAL_MS: '0',
  SCHEDULER_PAGES_ON_SALE: '1',
  SCHEDULER_PAGES_SOLD: '0',
  CRAWLER_HUMANIZE: 'false',
  CRAWLER_NETWORK_IDLE_MS: '100',
  JOB_ATTEMPTS: '2',
  JOB_BACKOFF_MS: '200',
  WORKER_SHUTDOWN_GRACE_MS: '10000',
};
const PENDING = ['delayed', 'waiting', 'prioritized'] as const;

describe('a fleet of processes in Bull Board', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-board-'));
  const expectations = new Expectations();
  const started: ProductProcess[] = [];
  let server: FeedServer;
  let market: FixtureMarketplace;
  let api: ApiClient;
  const ids = { owner: '', feeds: '', crawler: '' };

  beforeAll(async () => {
    [server, market] = await Promise.all([startFeedServer(), FixtureMarketplace.start()]);
    const env = { ...SETTINGS, CRAWL_BASE_URL: market.url };
    const owner = await startProduct({ dataDir, port: await freePort(), env });
    started.push(owner);
    ids.owner = /instance (\S+)\)/.exec(owner.output())![1]!;
    api = await adminClient(owner.url!);
    for (const role of ['feeds', 'crawler'] as const) {
      const p = await startProduct({ dataDir, command: ['start:role', role], env });
      started.push(p);
      expect(p.output()).toContain('attached to the embedded services of a running platform process');
      ids[role] = /instance (\S+); attached/.exec(p.output())![1]!;
    }
  }, 300_000);
  afterAll(async () => {
    for (const p of [...started].reverse()) await p.stop();
    await Promise.all([server?.stop(), market?.stop()]);
    await removeDataDir(dataDir);
  });

  const board = (method: string, p: string, body?: unknown) => api.request(method, `${BOARD}${p}`, body);
  /** Pending jobs of a queue whose data matches, through the REST job console. */
  async function pending(queue: string, matches: (data: Record<string, unknown>) => boolean) {
    const found: { id: string; state: string }[] = [];
    for (const state of PENDING) {
      const jobs = (await api.get(`/api/queues/${queue}/jobs?state=${state}&start=0&end=999`)).body.jobs as { id: string; data: Record<string, unknown> }[];
      found.push(...jobs.filter((j) => matches(j.data)).map((j) => ({ id: j.id, state })));
    }
    return found;
  }
  const task = async (id: string) => (await api.get(`/api/tasks/${id}`)).body as { state: string; result?: Record<string, unknown> };

  it('lists the processes serving each queue by name, and shows Redis', async () => {
    const names = (queue: string) =>
      waitFor(
        async () => {
          const res = await board('GET', `/queues/${queue}/workers`);
          const list = (res.body.workers as { name: string }[]).map((w) => w.name).sort();
          return list.length === 2 ? list : undefined;
        },
        { timeoutMs: 30_000, message: `two workers of ${queue}` },
      );
    expect(await names('feed-refresh')).toEqual([`feeds@${ids.owner}`, `feeds@${ids.feeds}`].sort());
    expect(await names('crawl')).toEqual([`crawler@${ids.owner}`, `crawler@${ids.crawler}`].sort());
    const redis = await board('GET', '/redis/stats');
    expect(redis.status).toBe(200);
    expect(redis.body).toMatchObject({ backend: 'redis', mode: 'standalone' });
  });

  it('retries a dead refresh through its chain: the feed is healthy with one pending refresh', async () => {
    server.setStatus('fleet', 404);
    const feed = (await api.post('/api/feeds', { url: server.url('/versioned/fleet.xml') })).body as { id: number; taskId: string };
    expectations.expectJobFailure((l) => l.queue === 'feed-refresh' && l.jobId === feed.taskId);
    await waitFor(async () => (await task(feed.taskId)).state === 'failed', { timeoutMs: 60_000, message: 'the refresh did not fail' });
    const ofFeed = (d: Record<string, unknown>) => d.feedId === feed.id;
    const chain = await waitFor(async () => {
      const p = await pending('feed-refresh', ofFeed);
      return p.length === 1 && p[0]!.state === 'delayed' ? p[0]! : undefined;
    });
    expect((await api.get(`/api/feeds/${feed.id}`)).body).toMatchObject({ status: 'error', errorCount: 1 });
    server.setStatus('fleet', undefined);

    const res = await board('PUT', `/queues/feed-refresh/${feed.taskId}/retry`);
    expect(res.status).toBeLessThan(300);
    // The feed's own pending refresh ran now (no longer backed off), not a second one beside it.
    await waitFor(async () => (await task(chain.id)).state === 'completed', { timeoutMs: 60_000, message: "the feed's pending refresh did not run now" });
    expect(res.body.chain).toMatchObject({ status: 'moved_forward', taskId: chain.id });
    await waitFor(async () => (await api.get(`/api/feeds/${feed.id}`)).body.status === 'ok', { timeoutMs: 60_000, message: 'the feed did not heal' });
    expect((await api.get(`/api/feeds/${feed.id}`)).body).toMatchObject({ status: 'ok', errorCount: 0 });
    const after = await waitFor(async () => {
      const p = await pending('feed-refresh', ofFeed);
      return p.length === 1 && p[0]!.id !== chain.id ? p : undefined;
    });
    expect(after).toHaveLength(1);
    expect((await api.get(`/api/dead-jobs?queue=feed-refresh`)).body.total).toBe(0);
  });

  it("retries a dead crawl through its chain: the IP's crawl runs now, healthy with one pending crawl", async () => {
    market.behaviour.set([{ mode: 'server-error', match: { keyword: 'fleet-dead' } }]);
    const ip = (await api.post('/api/ips', { name: 'Fleet', keyword: 'fleet-dead' })).body as { id: number };
    const ofIp = (d: Record<string, unknown>) => d.ipId === ip.id;
    expectations.expectJobFailure((l) => l.queue === 'crawl' && typeof l.jobId === 'string' && l.jobId.startsWith(`ip${ip.id}-`));
    // Its first crawl, dead (found among the dead jobs: the IP may have moved on before the answer to its creation).
    const dead = await waitFor(
      async () => ((await api.get('/api/dead-jobs?queue=crawl')).body.jobs as { id: string; data: Record<string, unknown> }[]).find((j) => ofIp(j.data))?.id,
      { timeoutMs: 120_000, intervalMs: 250, message: 'the crawl did not fail for good' },
    );
    const next = await waitFor(
      async () => {
        const p = await pending('crawl', ofIp);
        return p.length === 1 && p[0]!.id !== dead ? p[0]! : undefined;
      },
      { timeoutMs: 30_000, message: 'the IP did not move on to its next crawl' },
    );
    expect(next.state).toBe('delayed');
    market.behaviour.set([]);

    const res = await board('PUT', `/queues/crawl/${dead}/retry`);
    expect(res.status).toBeLessThan(300);
    expect((await api.get(`/api/tasks/${dead}`)).status).toBe(404); // the dead crawl does not run again (as a stale crawl)
    expect(res.body.chain).toMatchObject({ status: 'crawl_now', taskId: next.id });
    // The IP's own pending crawl ran now (not at its interval).
    await waitFor(async () => (await task(`result-${next.id}`)).state === 'completed', {
      timeoutMs: 120_000,
      intervalMs: 250,
      message: 'the crawl now did not run',
    });
    const healthy = (await api.get(`/api/ips/${ip.id}`)).body;
    expect(healthy.lastCrawledAt).not.toBeNull();
    const after = await waitFor(async () => {
      const p = await pending('crawl', ofIp);
      return p.length === 1 && p[0]!.id !== next.id ? p : undefined;
    });
    expect(after[0]!.state).toBe('delayed');
    expect((await api.get(`/api/tasks/${dead}`)).status).toBe(404);
    expect((await api.get(`/api/dead-jobs?queue=crawl`)).body.total).toBe(0);
  }, 300_000);

  it('answers "Add job" with bad data 4xx and adds nothing', async () => {
    const counts = async () => (await api.get('/api/queues')).body.queues as { name: string; counts: Record<string, number> }[];
    const before = await counts();
    const bad = await board('POST', '/queues/pool-consumed/add', { name: 'mark', data: { type: 'titles', groupId: 'seven' }, options: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_payload', field: 'data.groupId' });
    const crawl = await board('POST', '/queues/crawl/add', { name: 'crawl', data: { ipId: 1, keyword: 'x', taskId: '1', pagesOnSale: 1, pagesSold: 0 } });
    expect(crawl.status).toBe(409);
    expect(crawl.body.error.code).toBe('chained_queue');
    const after = await counts();
    const queued = (list: typeof before, name: string) => {
      const c = list.find((q) => q.name === name)!.counts;
      return (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) + (c.active ?? 0);
    };
    for (const name of ['pool-consumed', 'crawl']) expect(queued(after, name), name).toBe(queued(before, name));
  });

  it('shows per-minute throughput of feed-refresh once refreshes ran in two minutes', async () => {
    const feed = (await api.post('/api/feeds', { url: server.url('/rss/fleet-throughput.xml') })).body as { id: number };
    // A data point is written when a job finishes in a later minute than the previous one.
    const metrics = await waitFor(
      async () => {
        await api.post('/api/queue/schedule-feed', { feed_id: feed.id, force_immediate: true });
        const m = (await board('GET', '/queues/feed-refresh/metrics')).body as { completed: { data: number[]; meta: { count: number } } };
        return m.completed.data.length > 0 ? m : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 5000, message: 'no per-minute point' },
    );
    expect(metrics.completed.meta.count).toBeGreaterThan(1); // refreshes completed, over every process
    expect(metrics.completed.data.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 180_000);

  it('logged no error and failed no job that the test did not cause', () => {
    expect(started.flatMap((p) => expectations.unexpected(p.lines()))).toEqual([]);
  });
});
