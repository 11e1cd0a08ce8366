/**
 * The other domains, as a user drives `npm start` over HTTP: an IP crawled by the real crawler
 * (headless Chromium) on the fixture marketplace the crawler role serves itself, its result
 * processed (items, hourly stats, next crawl); content pools (import, pop, pop-many, empty);
 * session messages (append, read back, read from the DB once drained); and a dead job inspected
 * and replayed.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

describe('crawl, pipeline, pools, messages and dead jobs through npm start', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-domains-'));
  const expectations = new Expectations();
  let product: ProductProcess;
  let feeds: FeedServer;
  let api: ApiClient;

  beforeAll(async () => {
    feeds = await startFeedServer();
    product = await startProduct({
      dataDir,
      port: await freePort(),
      env: {
        OUTBOUND_ALLOW: '127.0.0.0/8', // the feed server of the dead-job test is on loopback
        SCHEDULER_PAGES_ON_SALE: '1',
        SCHEDULER_PAGES_SOLD: '1',
        CRAWLER_HUMANIZE: 'false',
        MESSAGE_CACHE_MAX_LEN: '5',
      },
    });
    api = await adminClient(product.url!);
  });
  afterAll(async () => {
    await product?.stop();
    await feeds?.stop();
    await removeDataDir(dataDir);
  });

  it('crawls an IP and processes its result: items, its first crawl as the baseline, and the next crawl', async () => {
    const created = await api.post('/api/ips', { name: 'Frieren', keyword: 'e2e-frieren' });
    expect(created.status).toBe(201);
    const ip = created.body;
    const taskId = ip.currentCrawl.taskId as string;
    const result = await waitFor(
      async () => {
        const task = (await api.get(`/api/tasks/result-${taskId}`)).body;
        return task.state === 'completed' ? task.result : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500, message: `the result of crawl ${taskId}` },
    );
    expect(result).toMatchObject({ status: 'processed', baseline: true, inflow: 0, outflow: 0 });
    expect(result.items).toBeGreaterThan(0);
    // The crawl, the child of that processing in their flow: its result, progress and a log line per page.
    const crawl = (await api.get(`/api/tasks/${taskId}`)).body;
    expect(crawl).toMatchObject({ state: 'completed', result: { taskId, totalFound: result.items }, progress: { items: result.items } });
    expect(crawl.logs.length).toBe(crawl.progress.pagesDone);

    const detail = (await api.get(`/api/ips/${ip.id}`)).body;
    expect(detail.lastCrawledAt).not.toBeNull();
    expect(detail.hourlyStats).toEqual([]); // a first crawl counts nothing
    const items = (await api.get(`/api/ips/${ip.id}/items?limit=500`)).body;
    expect(items.total).toBe(result.items);
    // The closed loop: one next crawl, delayed by the interval the pipeline computed.
    expect(detail.currentCrawl).toMatchObject({ taskId: result.nextTaskId, state: 'delayed' });
    expect(Date.parse(detail.currentCrawl.dueAt)).toBeGreaterThan(Date.now() + 60_000);
  }, 240_000);

  it('serves its demo marketplace read-only: nobody on the machine can fake the crawl data through it', async () => {
    const market = /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"fixture marketplace serving/.exec(product.output())?.[1];
    expect(market, 'the log names the fixture marketplace it serves').toBeDefined();
    expect((await fetch(`${market}/search?keyword=e2e-frieren`)).status).toBe(200);
    for (const [method, route] of [
      ['POST', 'reset'],
      ['POST', 'sell'],
      ['POST', 'price'],
      ['POST', 'behaviour'],
      ['GET', 'requests'],
    ] as const) {
      const res = await fetch(`${market}/__fixture/${route}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{}' : null,
      });
      expect(res.status, `${method} /__fixture/${route}`).toBe(404);
    }
    expect((await fetch(`${market}/search?keyword=${'k'.repeat(201)}`)).status).toBe(400);
  });

  it('imports pool rows and serves each once: pop, pop-many, then empty', async () => {
    const items = Array.from({ length: 7 }, (_, i) => ({ text: `title ${i} — ünïcödé`, batchId: 1 }));
    const imported = await api.post('/api/pools/titles/42/items', { items });
    expect(imported.status).toBe(201);
    expect(imported.body.inserted).toBe(7);

    const served: string[] = [];
    const one = await api.post('/api/pools/titles/42/pop');
    expect(one.status).toBe(200);
    served.push(one.body.text);
    // pop-many serves what the pool and the table hold now: possibly fewer while a refill moves
    // rows into the pool, so a client asks again until it has what it needs.
    await waitFor(
      async () => {
        const many = await api.post('/api/pools/titles/42/pop-many', { count: 10 });
        expect(many.status).toBe(200);
        served.push(...many.body.items.map((i: { text: string }) => i.text));
        return served.length >= items.length;
      },
      { timeoutMs: 10_000, intervalMs: 50, message: 'every imported row served' },
    );
    expect(served.sort()).toEqual(items.map((i) => i.text).sort());

    const empty = await api.post('/api/pools/titles/42/pop');
    expect(empty.status).toBe(404);
    expect(empty.body.error.code).toBe('pool_empty');
    expect((await api.post('/api/pools/titles/42/pop-many', { count: 3 })).body.items).toEqual([]);
  });

  it('appends session messages, reads them back, and reads them from the DB once drained', async () => {
    const session = 'e2e-session-1';
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) {
      const content = `message ${i}: ${'∑'.repeat(i)}`;
      const res = await api.post(`/api/sessions/${session}/messages`, { role: i % 2 ? 'assistant' : 'user', content });
      expect(res.status).toBe(201);
      sent.push(content);
    }
    const recent = (await api.get(`/api/sessions/${session}/messages?limit=5`)).body;
    expect(recent.source).toBe('cache');
    expect(recent.messages.map((m: { content: string }) => m.content)).toEqual(sent.slice(3));
    // The cache keeps 5 (MESSAGE_CACHE_MAX_LEN): all 8 come from the DB once the drain wrote them.
    const all = await waitFor(
      async () => {
        const res = (await api.get(`/api/sessions/${session}/messages?limit=8`)).body;
        return res.source === 'db' && res.messages.length === 8 ? res : undefined;
      },
      { timeoutMs: 30_000, message: 'the drain to write every message' },
    );
    expect(all.messages.map((m: { content: string }) => m.content)).toEqual(sent);
  });

  it('shows a dead job and replays it once the cause is gone', async () => {
    feeds.setStatus('gone', 404);
    const sub = await api.post('/api/feeds', { url: feeds.url('/versioned/gone.xml') });
    expect(sub.status).toBe(201);
    expectations.expectJobFailure((l) => l.queue === 'feed-refresh' && String(l.jobId).startsWith(`feed-${sub.body.id}-`));
    const dead = await waitFor(
      async () => {
        const list = (await api.get('/api/dead-jobs')).body;
        return list.jobs.find((j: { queue: string; data: { feedId: number } }) => j.queue === 'feed-refresh' && j.data.feedId === sub.body.id);
      },
      { timeoutMs: 60_000, message: 'the dead refresh job' },
    );
    expect(dead.failedReason).toMatch(/HTTP 404/);
    expect((await api.get(`/api/feeds/${sub.body.id}`)).body).toMatchObject({ status: 'error' });

    feeds.setStatus('gone', undefined);
    // The replay takes the dead refresh's place in the feed's chain: the feed's one pending
    // refresh runs now (never a second one), and the dead job goes.
    const retried = await api.post(`/api/queues/feed-refresh/jobs/${dead.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.chain).toMatchObject({ status: expect.stringMatching(/^(moved_forward|already_queued|running|queued)$/), taskId: expect.any(String) });
    const done = await waitFor(
      async () => {
        const task = (await api.get(`/api/tasks/${retried.body.chain.taskId}`)).body;
        return task.state === 'completed' ? task : undefined;
      },
      { timeoutMs: 60_000, message: 'the replayed refresh' },
    );
    expect(done.result).toMatchObject({ outcome: 'refreshed', inserted: 3 });
    expect((await api.get(`/api/feeds/${sub.body.id}`)).body).toMatchObject({ status: 'ok', lastError: null });
    expect((await api.get(`/api/dead-jobs?queue=feed-refresh&q=${dead.id}`)).body.total).toBe(0);
    // One pending refresh for the feed afterwards: the chain goes on, once.
    await waitFor(
      async () => {
        const pending = await Promise.all(
          ['delayed', 'waiting', 'prioritized'].map(
            async (state) => (await api.get(`/api/queues/feed-refresh/jobs?state=${state}`)).body.jobs as { data: { feedId: number } }[],
          ),
        );
        return pending.flat().filter((j) => j.data.feedId === sub.body.id).length === 1;
      },
      { timeoutMs: 30_000, message: 'exactly one pending refresh of the feed' },
    );
  });

  it('logged no error and failed no job that the test did not cause', () => {
    expect(expectations.unexpected(product.lines())).toEqual([]);
  });
});
