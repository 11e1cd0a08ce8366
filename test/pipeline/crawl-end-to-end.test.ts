/**
 * End to end with the real crawler (headless Chromium) against the fixture marketplace: an IP
 * is created and crawled as a flow (the processing of its result is the parent, the crawl its
 * child, with progress and log lines); its first crawl is its baseline (items recorded, nothing
 * counted); the market changes (items sell, prices change); a manual crawl sees it, with the
 * expected sold / price_change / new_listing counts; and the next crawl is scheduled at the
 * interval computed from the new weight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureMarketplace } from '../../src/services/fixture-marketplace/server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

const KEYWORD = 'e2e-frieren';

describe('crawl → pipeline → next crawl, with the real crawler', () => {
  let market: FixtureMarketplace;
  let t: TestPlatform;

  beforeAll(async () => {
    market = await FixtureMarketplace.start({ seed: 'pipeline-e2e' });
    t = await startTestPlatform({
      roles: ['crawler', 'pipeline', 'api'],
      env: {
        CRAWL_SITE: 'fixture',
        CRAWL_BASE_URL: market.url,
        CRAWLER_HUMANIZE: 'false',
        CRAWLER_NETWORK_IDLE_MS: '100',
        CRAWLER_SCROLL_DELAY_MS: '2000',
        CRAWLER_PAGE_TIMEOUT_MS: '30000',
        SCHEDULER_PAGES_ON_SALE: '1',
        SCHEDULER_PAGES_SOLD: '1',
        SCHEDULER_MAX_INTERVAL: '10000',
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await market?.stop();
  });

  async function crawled(ipId: number, taskId: string) {
    const done = await waitFor(
      async () => {
        const res = await t.api.get(`/api/tasks/result-${taskId}`);
        return res.status === 200 && ['completed', 'failed'].includes(res.body.state) ? res.body : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, message: `crawl ${taskId} of IP ${ipId} never reached the pipeline` },
    );
    expect(done.state).toBe('completed');
    return done.result;
  }

  it('crawls an IP, then sees the market move on a second crawl and schedules the next at the computed interval', async () => {
    const ip = (await t.api.post('/api/ips', { name: 'Frieren', keyword: KEYWORD })).body;
    const first = await crawled(ip.id, ip.currentCrawl.taskId);
    const perPage = market.catalog.itemsPerPage;
    // Its first crawl: every item recorded as the baseline, nothing counted (no inflow of 120, no weight change).
    expect(first).toMatchObject({
      status: 'processed',
      baseline: true,
      items: 2 * perPage,
      inflow: 0,
      outflow: 0,
      alerts: [],
      weight: 1,
      intervalSeconds: 7200,
    });

    // A flow: the crawl is the child of the processing of its result, which holds its result.
    const queues = t.platform.ctx.queues;
    const crawlJob = (await queues.queue('crawl').getJob(ip.currentCrawl.taskId))!;
    expect(crawlJob.parent).toEqual({ id: `result-${ip.currentCrawl.taskId}`, queueKey: queues.queue('crawlResult').qualifiedName, idof: true });
    const parent = (await queues.queue('crawlResult').getJob(`result-${ip.currentCrawl.taskId}`))!;
    const children = await parent.getChildrenValues();
    expect(Object.keys(children)).toEqual([`${queues.queue('crawl').qualifiedName}:${ip.currentCrawl.taskId}`]);
    expect(Object.values(children)[0]).toMatchObject({ taskId: ip.currentCrawl.taskId, pagesCrawled: 2, totalFound: 2 * perPage });
    // The crawl's progress and log lines, as GET /api/tasks/:id shows them.
    const task = (await t.api.get(`/api/tasks/${ip.currentCrawl.taskId}`)).body;
    expect(task).toMatchObject({
      queue: 'crawl',
      state: 'completed',
      progress: { pagesDone: 2, pagesPlanned: 2, items: 2 * perPage, errors: 0, blocks: 0, proxy: 'direct' },
      logCount: 2,
    });
    expect(task.logs).toEqual([
      expect.stringMatching(/^on_sale page 1: 120 items in \d+ ms via direct$/),
      expect.stringMatching(/^sold page 1: 120 items in \d+ ms via direct$/),
    ]);
    expect((await t.api.get(`/api/tasks/result-${ip.currentCrawl.taskId}`)).body.logs).toEqual([
      expect.stringContaining(`first crawl of IP ${ip.id}: 240 items recorded as its baseline`),
    ]);

    const detail = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(detail.lastCrawledAt).not.toBeNull();
    expect(detail.hourlyStats).toEqual([]);
    const onSale = await t.api.get(`/api/ips/${ip.id}/items?status=on_sale&limit=500`);
    expect(onSale.body.total).toBe(perPage);
    const listed = market.catalog.page(KEYWORD, 'on_sale', 1);
    expect(new Set(onSale.body.items.map((i: { sourceId: string }) => i.sourceId))).toEqual(new Set(listed.map((i) => i.sourceId)));
    expect((await t.api.get(`/api/ips/${ip.id}/items?status=sold`)).body.total).toBe(perPage);

    // The market moves: three listed items sell, two others change price.
    const soldIds = listed.slice(10, 13).map((i) => i.sourceId);
    expect(market.catalog.sell(KEYWORD, soldIds)).toBe(3);
    const repriced = listed.slice(0, 2).map((i) => ({ sourceId: i.sourceId, price: i.price + 500 }));
    for (const item of repriced) expect(market.catalog.setPrice(KEYWORD, item.sourceId, item.price)).toBe(true);

    const trigger = await t.api.post(`/api/ips/${ip.id}/crawl`);
    expect(trigger.status).toBe(202);
    expect(trigger.body.status).toBe('moved_forward');
    const second = await crawled(ip.id, trigger.body.task_id);
    // Three items moved up onto the first on-sale page in place of the sold ones: new listings to us.
    expect(second.transitions).toEqual({ new_listing: 3, new_sold: 0, sold: 3, relisted: 0, price_change: 2, unchanged: 2 * perPage - 8 });
    expect(second).toMatchObject({ inflow: 3, outflow: 3, weight: 0.9, intervalSeconds: 8000 });

    const after = (await t.api.get(`/api/ips/${ip.id}`)).body;
    expect(after.weight).toBe(0.9);
    expect(after.intervalSeconds).toBe(8000);
    const stats = after.hourlyStats.reduce(
      (a: { inflow: number; outflow: number }, h: { inflow: number; outflow: number }) => ({ inflow: a.inflow + h.inflow, outflow: a.outflow + h.outflow }),
      { inflow: 0, outflow: 0 },
    );
    expect(stats).toEqual({ inflow: 3, outflow: 3 });
    const soldItems = (await t.api.get(`/api/ips/${ip.id}/items?status=sold&limit=500`)).body;
    for (const id of soldIds) expect(soldItems.items.find((i: { sourceId: string }) => i.sourceId === id)).toMatchObject({ status: 'sold' });
    const all = (await t.api.get(`/api/ips/${ip.id}/items?limit=500`)).body.items;
    for (const item of repriced) expect(all.find((i: { sourceId: string }) => i.sourceId === item.sourceId).price).toBe(item.price);

    // Closed loop: exactly one next crawl, due at lastCrawledAt + 8000 s.
    expect(after.currentCrawl).toMatchObject({ taskId: second.nextTaskId, state: 'delayed' });
    expect(Math.abs(Date.parse(after.currentCrawl.dueAt) - (Date.parse(after.lastCrawledAt) + 8000_000))).toBeLessThan(2000);
    const pending = await t.platform.ctx.queues.queue('crawl').getJobs(['waiting', 'delayed', 'prioritized']);
    expect(pending.filter((j) => j.data.ipId === ip.id).map((j) => j.id)).toEqual([second.nextTaskId]);
  }, 240_000);
});
