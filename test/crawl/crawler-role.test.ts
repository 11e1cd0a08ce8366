/**
 * The crawler role in a platform process, against a fixture marketplace the test serves and
 * controls (CRAWL_SITE=fixture, CRAWL_BASE_URL=its URL; the one the platform serves itself for the
 * demo has no control routes: test/e2e/domains.test.ts), in real Chromium:
 * - a 5+5 page crawl of 120 items per page yields every item once, returned as the result of a
 *   flow whose parent (the pipeline's `crawl-result` job, id derived from the task id) holds it;
 *   the crawl reports its progress (pages, items, proxy) and one log line per page;
 * - a later crawl sees items that sold and prices that changed meanwhile;
 * - a blocked crawl is delayed and tried again, without spending an attempt; its progress counts the blocks;
 * - browser recycles under load drain without failing a page, and leave one browser running;
 * - SIGKILL of Chromium in the middle of a page ends in a retried, completed job.
 */
import type { Job, Queue } from 'bullmq';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrawlerRoleHandle } from '../../src/crawl/role.js';
import type { CrawlJobPayload, CrawlResultPayload } from '../../src/queues/declarations/crawl.js';
import type { BehaviourRule } from '../../src/services/fixture-marketplace/behaviour.js';
import type { FixtureItem } from '../../src/services/fixture-marketplace/catalog.js';
import { FixtureMarketplace, type RequestLog } from '../../src/services/fixture-marketplace/server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { chromiumBrowserPids } from './chromium-processes.js';

describe('crawler role', () => {
  let t: TestPlatform;
  let marketplace: FixtureMarketplace;
  let market: string;
  let crawl: Queue;
  let results: Queue;
  let profileRoot: string;
  let taskSeq = 0;

  const admin = async <T = unknown>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${market}/__fixture/${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.ok).toBe(true);
    return (await res.json()) as T;
  };
  const setRules = (rules: BehaviourRule[]) => admin('POST', 'behaviour', { rules });
  const fixtureItems = async (keyword: string, status: 'on_sale' | 'sold') =>
    (await admin<{ items: FixtureItem[] }>('GET', `items?keyword=${encodeURIComponent(keyword)}&status=${status}`)).items;
  const requests = () => admin<RequestLog>('GET', 'requests');

  const counter = async (name: string, labels: Record<string, string> = {}) => {
    const metric = t.platform.ctx.metrics.registry.getSingleMetric(name);
    const { values } = await metric!.get();
    return values.filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val)).reduce((sum, v) => sum + v.value, 0);
  };

  async function enqueue(keyword: string, pagesOnSale: number, pagesSold: number): Promise<{ job: Job; task: CrawlJobPayload }> {
    const task = { ipId: 7, keyword, taskId: `t-${Date.now()}-${++taskSeq}`, pagesOnSale, pagesSold };
    const job = await t.platform.ctx.queues.add('crawl', 'crawl', task, { jobId: `crawl-${task.taskId}` });
    return { job, task };
  }

  async function finished(job: Job, timeoutMs = 90_000): Promise<Job> {
    const done = await waitFor(
      async () => {
        const j = await crawl.getJob(job.id!);
        return j?.finishedOn ? j : null;
      },
      { timeoutMs, intervalMs: 200, message: `crawl job ${job.id} did not finish` },
    );
    return done!;
  }

  /** The result as the flow's parent has it (the crawl's return value). */
  async function resultOf(taskId: string): Promise<CrawlResultPayload> {
    const parent = await results.getJob(`result-${taskId}`);
    expect(parent, `crawl-result job result-${taskId}`).toBeDefined();
    const values = Object.values(await parent!.getChildrenValues());
    expect(values).toHaveLength(1);
    return values[0] as CrawlResultPayload;
  }

  beforeAll(async () => {
    marketplace = await FixtureMarketplace.start();
    market = marketplace.url;
    t = await startTestPlatform({
      roles: ['crawler'],
      env: {
        CRAWL_BASE_URL: market,
        CRAWLER_CONCURRENCY: '3',
        CRAWLER_PAGES_PER_BROWSER: '8',
        CRAWLER_PAGE_TIMEOUT_MS: '20000',
        CRAWLER_SCROLL_DELAY_MS: '2000',
        CRAWLER_NETWORK_IDLE_MS: '100',
        CRAWLER_BLOCKED_RETRY_DELAY_MS: '300',
        JOB_BACKOFF_MS: '200',
      },
    });
    crawl = t.platform.ctx.queues.queue('crawl');
    results = t.platform.ctx.queues.queue('crawlResult');
    profileRoot = path.join(t.env.DATA_DIR!, 'chromium');
  });
  afterAll(async () => {
    await t?.stop();
    await marketplace?.stop();
  });

  it('crawls the marketplace at CRAWL_BASE_URL', () => {
    expect((t.platform.roles.find((r) => r.name === 'crawler') as CrawlerRoleHandle).baseUrl).toBe(market);
  });

  it("crawls 5 on-sale and 5 sold pages of 120 items, every item once, returned to its flow's parent with progress and log lines", async () => {
    const before = (await requests()).counts;
    const { job, task } = await enqueue('呪術廻戦', 5, 5);
    const done = await finished(job);

    expect(await done.getState()).toBe('completed');
    expect(done.returnvalue).toMatchObject({ taskId: task.taskId, crawledBy: t.platform.ctx.instanceId, totalFound: 1200, pagesCrawled: 10, errors: [] });
    expect(done.parent).toEqual({ id: `result-${task.taskId}`, queueKey: results.qualifiedName, idof: true });
    // No pipeline runs here: the parent waits for it, with its child's result.
    expect(await results.getJobState(`result-${task.taskId}`)).toBe('waiting');
    expect(done.progress).toEqual({ pagesDone: 10, pagesPlanned: 10, items: 1200, errors: 0, blocks: 0, proxy: 'direct' });
    const logs = await crawl.getJobLogs(job.id!);
    expect(logs.count).toBe(10);
    expect(logs.logs[0]).toMatch(/^on_sale page 1: 120 items in \d+ ms via direct$/);
    expect(logs.logs[9]).toMatch(/^sold page 5: 120 items in \d+ ms via direct$/);
    const result = await resultOf(task.taskId);
    expect(result).toMatchObject({ ipId: 7, taskId: task.taskId, totalFound: 1200, pagesCrawled: 10, errors: [], crawledBy: t.platform.ctx.instanceId });
    const onSale = result.items.filter((i) => i.status === 'on_sale');
    const sold = result.items.filter((i) => i.status === 'sold');
    expect(onSale.map((i) => i.sourceId)).toEqual((await fixtureItems('呪術廻戦', 'on_sale')).map((i) => i.sourceId));
    expect(sold.map((i) => i.sourceId)).toEqual((await fixtureItems('呪術廻戦', 'sold')).map((i) => i.sourceId));
    expect(new Set(result.items.map((i) => i.sourceId)).size).toBe(1200);

    const after = (await requests()).counts;
    expect(after.search - before.search).toBe(10);
    expect(after.image + after.font + after.analytics).toBe(0);
  }, 120_000);

  it('a later crawl sees items that sold and a changed price', async () => {
    const keyword = 'ちいかわ';
    const first = await enqueue(keyword, 1, 1);
    await finished(first.job);
    const before = await resultOf(first.task.taskId);
    const [a, b, c] = before.items.filter((i) => i.status === 'on_sale');

    await admin('POST', 'sell', { keyword, sourceIds: [a!.sourceId, b!.sourceId] });
    await admin('POST', 'price', { keyword, sourceId: c!.sourceId, price: 4321 });
    const second = await enqueue(keyword, 1, 1);
    await finished(second.job);
    const after = new Map((await resultOf(second.task.taskId)).items.map((i) => [i.sourceId, i]));

    expect(after.get(a!.sourceId)?.status).toBe('sold');
    expect(after.get(b!.sourceId)?.status).toBe('sold');
    expect(after.get(c!.sourceId)).toMatchObject({ status: 'on_sale', price: 4321 });
  });

  it('delays a blocked crawl and tries it again later, without spending an attempt', async () => {
    const delayedBefore = await counter('wp_jobs_delayed_total', { queue: 'crawl', reason: 'blocked' });
    const failedBefore = await counter('wp_jobs_failed_total', { queue: 'crawl', outcome: 'retry' });
    await setRules([{ mode: 'forbidden', match: { keyword: 'blocked-twice' }, times: 2 }]);
    const { job, task } = await enqueue('blocked-twice', 1, 1);
    const done = await finished(job);

    expect(await done.getState()).toBe('completed');
    expect(done.attemptsMade).toBe(1); // BullMQ counts the attempt that completed; the blocked ones did not count
    expect(done.returnvalue).toMatchObject({ totalFound: 240, pagesCrawled: 2, errors: [] });
    expect(done.progress).toMatchObject({ pagesDone: 2, items: 240, blocks: 2 });
    expect((await crawl.getJobLogs(job.id!)).logs.filter((l) => l.includes('blocked'))).toHaveLength(2);
    expect((await resultOf(task.taskId)).errors).toEqual([]);
    // Waiting is not failing: both waits are counted as delays, none as a failure.
    expect((await counter('wp_jobs_delayed_total', { queue: 'crawl', reason: 'blocked' })) - delayedBefore).toBe(2);
    expect((await counter('wp_jobs_failed_total', { queue: 'crawl', outcome: 'retry' })) - failedBefore).toBe(0);
    const modes = (await requests()).search.filter((r) => r.keyword === 'blocked-twice').map((r) => r.mode);
    expect(modes).toEqual(['forbidden', 'forbidden', 'normal', 'normal']);
  });

  it('recycles browsers under load without failing a page, and closes the drained ones', async () => {
    const recyclesBefore = await counter('wp_crawler_browser_launches_total', { reason: 'recycle' });
    await setRules([{ mode: 'slow', delayMs: 300 }]); // pages overlap the recycles
    try {
      const jobs = await Promise.all(Array.from({ length: 6 }, (_, i) => enqueue(`load-${i}`, 2, 2)));
      const done = await Promise.all(jobs.map(({ job }) => finished(job, 150_000)));
      for (const j of done) {
        expect(await j.getState()).toBe('completed');
        expect(j.returnvalue).toMatchObject({ totalFound: 480, pagesCrawled: 4, errors: [] });
        expect(j.attemptsMade).toBe(1);
      }
    } finally {
      await setRules([]);
    }
    // 24 pages at 8 per browser
    expect((await counter('wp_crawler_browser_launches_total', { reason: 'recycle' })) - recyclesBefore).toBeGreaterThanOrEqual(2);
    expect(await counter('wp_crawler_pages_total', { outcome: 'timeout' })).toBe(0);
    await waitFor(() => chromiumBrowserPids(profileRoot).length === 1, { message: 'drained browsers still running' });
  }, 180_000);

  it('a Chromium killed in the middle of a page ends in a retried, completed job', async () => {
    const crashesBefore = await counter('wp_crawler_browser_crashes_total');
    await setRules([{ mode: 'slow', delayMs: 5000, match: { keyword: 'kill-me', status: 'on_sale', page: 2 }, times: 1 }]);
    const { job, task } = await enqueue('kill-me', 2, 1);
    await waitFor(async () => (await requests()).search.some((r) => r.keyword === 'kill-me' && r.mode === 'slow'), { message: 'slow page never requested' });
    const victims = chromiumBrowserPids(profileRoot);
    expect(victims.length).toBeGreaterThan(0);
    for (const pid of victims) process.kill(pid, 'SIGKILL');

    const done = await finished(job);
    expect(await done.getState()).toBe('completed');
    expect(done.attemptsMade).toBe(2); // the attempt the kill failed, and the one that completed
    expect(done.returnvalue).toMatchObject({ taskId: task.taskId, crawledBy: t.platform.ctx.instanceId, totalFound: 360, pagesCrawled: 3, errors: [] });
    expect(await counter('wp_crawler_browser_crashes_total')).toBe(crashesBefore + victims.length);
    const survivors = chromiumBrowserPids(profileRoot);
    expect(survivors.length).toBe(1);
    expect(victims).not.toContain(survivors[0]);
  }, 120_000);
});
